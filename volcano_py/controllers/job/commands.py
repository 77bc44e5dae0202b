"""Commands (``bus.volcano.sh``): an action asked of a Job or a Queue, carried out at most once.

Does I/O: the Command is deleted (with a uid precondition) before its action is enqueued, as Volcano does, so
two operator instances or a redelivered event can never run one Command twice. The action itself is the Job
or Queue worker's, through its work queue.
"""

from __future__ import annotations

from volcano_py.api import constants as c
from volcano_py.api.batch import JobEvent
from volcano_py.api.bodies.command import (
    command_action,
    command_action_text,
    command_target_kind,
    command_target_name,
)
from volcano_py.api.bus import JOB_COMMAND_ACTIONS, QUEUE_COMMAND_ACTIONS, Event
from volcano_py.api.objects import Obj, uid_of
from volcano_py.controllers.job.policies import Request
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.kube.client import ApiError
from volcano_py.kube.events import NORMAL
from volcano_py.kube.kinds import COMMANDS
from volcano_py.log import get_logger

_log = get_logger(__name__)


async def command_issued(ctx: ControllerContext, namespace: str | None, name: str, body: Obj) -> None:
    """A Command was created (or listed): consume it, then enqueue its action for its target."""
    await ctx.ready.wait()  # the Jobs are listed: a Job's command is recorded on it
    action = command_action(body)
    delete = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid_of(body)}}
    try:
        await ctx.client.delete(COMMANDS.object_path(name, namespace), delete)
    except ApiError as exc:
        if exc.not_found or exc.conflict:
            return  # already consumed (by us before a restart, or by another instance)
        raise
    kind = command_target_kind(body)
    if kind == c.JOB_KIND and action in JOB_COMMAND_ACTIONS:
        key = (namespace or "", command_target_name(body))
        job = ctx.job(key)
        if job is not None:
            ctx.recorder.record(
                job, NORMAL, JobEvent.COMMAND_ISSUED,
                f"Start to execute command {action}, and clean it up to make sure executed not more "
                "than once.",
            )  # fmt: skip
        ctx.job_queue.add(key, Request(event=Event.COMMAND_ISSUED, action=action))
    elif kind == c.QUEUE_KIND and action in QUEUE_COMMAND_ACTIONS:
        ctx.queue_queue.add(command_target_name(body), action.value)
    else:
        _log.warning(
            "ignored command",
            command=f"{namespace}/{name}",
            action=command_action_text(body),
            target_kind=kind,
        )
