"""vcctl's ``jobflow``, ``jobtemplate``, ``cronjob`` and ``pod`` commands, with Volcano's flags and output.

``jobflow`` / ``jobtemplate``: create -f, list, get -N, delete -N|-f, describe [-N] -o yaml|json.
``cronjob`` (ours; Volcano's vcctl has none): list, get -N, suspend -N, resume -N (they set spec.suspend).
``pod list``: the pods of Volcano Jobs, by job (-j) or queue (-q).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api import constants as c
from volcano_py.api.bodies.cronjob import (
    cronjob_active,
    cronjob_last_schedule_time,
    cronjob_schedule,
    cronjob_suspended,
    cronjob_time_zone,
)
from volcano_py.api.bodies.jobflow import jobflow_phase
from volcano_py.api.bodies.pod import pod_containers
from volcano_py.api.objects import (
    creation_timestamp_of,
    is_deleting,
    name_of,
    namespace_of,
    status_of,
    without_managed_fields,
)
from volcano_py.cli.vcctl import _common
from volcano_py.cli.vcctl.commands import CommandError, _call, _client, _require
from volcano_py.cli.vcctl.objects import UsageError
from volcano_py.cli.vcctl.render import age, table
from volcano_py.kube.kinds import CRONJOBS, JOBFLOWS, JOBTEMPLATES, PODS, ResourceKind

JSON = dict[str, Any]
KINDS = {"jobflow": JOBFLOWS, "jobtemplate": JOBTEMPLATES}
Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]


def _namespace(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-n", "--namespace", default="default", help=f"the namespace of {what}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for group, what in (("jobflow", "jobflow"), ("jobtemplate", "job template")):
        verbs = sub.add_parser(group, help=f"vcctl command line operation {group}").add_subparsers(
            dest="verb", required=True
        )
        create = verbs.add_parser("create", help=f"create a {what}")
        _common(create)
        create.add_argument(
            "-f", "--file", default="", help=f"the path to the YAML file containing the {what}"
        )
        lst = verbs.add_parser("list", help=f"list {what}s")
        _common(lst)
        _namespace(lst, what)
        if group == "jobflow":
            lst.add_argument("--all-namespaces", action="store_true", help="list jobflows in all namespaces")
        for verb in ("get", "delete", "describe"):
            p = verbs.add_parser(verb, help=f"{verb} a {what}")
            _common(p)
            _namespace(p, what)
            p.add_argument("-N", "--name", default="", help=f"the name of {what}")
            if verb == "delete":
                p.add_argument(
                    "-f", "--file", default="", help=f"the path to the YAML file containing the {what}"
                )
            if verb == "describe":
                p.add_argument("-o", "--format", default="yaml", help="the format of output: yaml or json")

    cron = sub.add_parser("cronjob", help="vcctl command line operation cronjob").add_subparsers(
        dest="verb", required=True
    )
    lst = cron.add_parser("list", help="list cronjobs")
    _common(lst)
    _namespace(lst, "cronjob")
    lst.add_argument("--all-namespaces", action="store_true", help="list cronjobs in all namespaces")
    for verb, text in (
        ("get", "get a cronjob"),
        ("suspend", "suspend a cronjob"),
        ("resume", "resume a cronjob"),
    ):
        p = cron.add_parser(verb, help=text)
        _common(p)
        _namespace(p, "cronjob")
        p.add_argument("-N", "--name", default="", help="the name of cronjob")

    pod = sub.add_parser("pod", help="vcctl command line operation pod").add_subparsers(
        dest="verb", required=True
    )
    lst = pod.add_parser("list", help="list pod information created by vcjob")
    _common(lst)
    _namespace(lst, "pod")
    lst.add_argument("-j", "--job", default="", help="list pod with specified job name")
    lst.add_argument("-q", "--queue", default="", help="list pod with specified queue name")
    lst.add_argument("--all-namespaces", action="store_true", help="list pods in all namespaces")


def _read_manifests(path: str, kind: str) -> list[JSON]:
    if not path:
        raise UsageError("--file: the YAML file must be specified; pass -f FILE")
    try:
        docs = [d for d in yaml.safe_load_all(Path(path).read_text(encoding="utf-8")) if d]
    except OSError as err:
        raise UsageError(f"--file: cannot read {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise UsageError(f"--file: {path} is not valid YAML: {err}") from None
    found = [d for d in docs if isinstance(d, dict) and d.get("kind") == kind]
    if not found:
        raise UsageError(f"--file: {path} holds no {c.FLOW_API_VERSION} {kind}")
    return found


def _kind(args: argparse.Namespace) -> tuple[ResourceKind, str]:
    kind = KINDS[args.group]
    return kind, kind.kind


def _now() -> datetime:
    return datetime.now(UTC)


def _rows(kind: str, items: list[JSON]) -> str:
    if not items:
        return "No resources found\n"
    now = _now()
    if kind == c.JOBFLOW_KIND:
        rows = [
            [name_of(o), namespace_of(o), jobflow_phase(o), age(creation_timestamp_of(o), now)] for o in items
        ]
        return table(("Name", "Namespace", "Phase", "Age"), rows)
    rows = [[name_of(o), namespace_of(o)] for o in items]
    return table(("Name", "Namespace"), rows)


async def create(args: argparse.Namespace) -> int:
    kind, kind_name = _kind(args)
    objects = _read_manifests(args.file, kind_name)
    client = await _client(args)
    try:
        for obj in objects:
            namespace = namespace_of(obj) or "default"
            made = await _call(client.create(kind.collection_path(namespace), obj), f"create {kind_name}")
            print(f"Created {kind_name}: {namespace_of(made)}/{name_of(made)}")
    finally:
        await client.close()
    return 0


async def list_(args: argparse.Namespace) -> int:
    kind, kind_name = _kind(args)
    everywhere = getattr(args, "all_namespaces", False)
    client = await _client(args)
    try:
        answer = await _call(
            client.get(kind.collection_path(None if everywhere else args.namespace)), kind_name
        )
    finally:
        await client.close()
    items = sorted(answer.get("items", []), key=lambda o: (namespace_of(o), name_of(o)))
    sys.stdout.write(_rows(kind_name, items))
    return 0


async def get(args: argparse.Namespace) -> int:
    kind, kind_name = _kind(args)
    name = _require(args.name, "--name", args.group)
    client = await _client(args)
    try:
        obj = await _call(
            client.get(kind.object_path(name, args.namespace)), f"{kind_name} {args.namespace}/{name}"
        )
    finally:
        await client.close()
    sys.stdout.write(_rows(kind_name, [obj]))
    return 0


async def delete(args: argparse.Namespace) -> int:
    kind, kind_name = _kind(args)
    targets: list[tuple[str, str]]
    if args.file:
        targets = [
            (namespace_of(o) or args.namespace, name_of(o)) for o in _read_manifests(args.file, kind_name)
        ]
    else:
        targets = [(args.namespace, _require(args.name, "--name", args.group))]
    client = await _client(args)
    try:
        for namespace, name in targets:
            await _call(client.delete(kind.object_path(name, namespace)), f"{kind_name} {namespace}/{name}")
            print(f"Deleted {kind_name}: {namespace}/{name}")
    finally:
        await client.close()
    return 0


async def describe(args: argparse.Namespace) -> int:
    kind, kind_name = _kind(args)
    if args.format not in ("yaml", "json"):
        raise UsageError(f"--format: {args.format!r} is not supported; use yaml or json")
    client = await _client(args)
    try:
        if args.name:
            path = kind.object_path(args.name, args.namespace)
            items = [await _call(client.get(path), f"{kind_name} {args.namespace}/{args.name}")]
        else:
            items = (await _call(client.get(kind.collection_path(args.namespace)), kind_name)).get(
                "items", []
            )
    finally:
        await client.close()
    texts = [
        json.dumps(without_managed_fields(o), indent=2) + "\n"
        if args.format == "json"
        else yaml.safe_dump(without_managed_fields(o), sort_keys=False)
        for o in items
    ]
    sys.stdout.write("\n\n".join(texts))
    return 0


# --- cronjob ------------------------------------------------------------------------------------------------


def cronjob_rows(items: list[JSON], *, all_namespaces: bool, now: datetime) -> str:
    if not items:
        return "No resources found\n"
    headers = ("Name", "Schedule", "TimeZone", "Suspend", "Active", "LastSchedule", "Age")
    rows: list[list[object]] = []
    for o in items:
        last = cronjob_last_schedule_time(o)
        row: list[object] = [
            name_of(o),
            cronjob_schedule(o),
            cronjob_time_zone(o) or "<none>",
            str(cronjob_suspended(o)),
            len(cronjob_active(o)),
            age(last, now) if last else "<none>",
            age(creation_timestamp_of(o), now),
        ]
        rows.append([namespace_of(o), *row] if all_namespaces else row)
    return table(("Namespace", *headers) if all_namespaces else headers, rows)


async def cronjob_list(args: argparse.Namespace) -> int:
    client = await _client(args)
    try:
        path = CRONJOBS.collection_path(None if args.all_namespaces else args.namespace)
        answer = await _call(client.get(path), "cronjobs")
    finally:
        await client.close()
    items = sorted(answer.get("items", []), key=lambda o: (namespace_of(o), name_of(o)))
    sys.stdout.write(cronjob_rows(items, all_namespaces=args.all_namespaces, now=_now()))
    return 0


async def cronjob_get(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "cronjob")
    client = await _client(args)
    try:
        obj = await _call(
            client.get(CRONJOBS.object_path(name, args.namespace)), f"cronjob {args.namespace}/{name}"
        )
    finally:
        await client.close()
    sys.stdout.write(cronjob_rows([obj], all_namespaces=False, now=_now()))
    return 0


async def _cronjob_suspend(args: argparse.Namespace, suspend: bool) -> int:
    name = _require(args.name, "--name", "cronjob")
    client = await _client(args)
    try:
        await _call(
            client.patch(CRONJOBS.object_path(name, args.namespace), {"spec": {"suspend": suspend}}),
            f"cronjob {args.namespace}/{name}",
        )
    finally:
        await client.close()
    print(f"{'suspend' if suspend else 'resume'} cronjob {name} successfully")
    return 0


async def cronjob_suspend(args: argparse.Namespace) -> int:
    return await _cronjob_suspend(args, True)


async def cronjob_resume(args: argparse.Namespace) -> int:
    return await _cronjob_suspend(args, False)


# --- pod ----------------------------------------------------------------------------------------------------


def pod_status(pod: JSON) -> tuple[str, str, int]:
    """(ready "n/m", status, restarts) as kubectl and Volcano's vcctl show them."""
    status = status_of(pod)
    containers = status.get("containerStatuses") or []
    total = len(pod_containers(pod)) or len(containers)
    ready = sum(1 for cs in containers if cs.get("ready"))
    restarts = sum(int(cs.get("restartCount") or 0) for cs in containers)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for cs in containers:
        state = cs.get("state") or {}
        waiting, terminated = state.get("waiting") or {}, state.get("terminated") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated.get("reason"):
            reason = terminated["reason"]
    if is_deleting(pod):
        reason = "Terminating"
    return f"{ready}/{total}", str(reason), restarts


def pod_rows(pods: list[JSON], *, all_namespaces: bool, now: datetime) -> str:
    if not pods:
        return "No resources found\n"
    rows: list[list[object]] = []
    for pod in pods:
        ready, status, restarts = pod_status(pod)
        row: list[object] = [name_of(pod), ready, status, restarts, age(creation_timestamp_of(pod), now)]
        rows.append([namespace_of(pod), *row] if all_namespaces else row)
    headers = ("Name", "Ready", "Status", "Restart", "Age")
    return table(("Namespace", *headers) if all_namespaces else headers, rows)


async def pod_list(args: argparse.Namespace) -> int:
    selector = [c.JOB_NAME_KEY + (f"={args.job}" if args.job else "")]
    if args.queue:
        selector.append(f"{c.QUEUE_NAME_KEY}={args.queue}")
    client = await _client(args)
    try:
        path = PODS.collection_path(None if args.all_namespaces else args.namespace)
        answer = await _call(client.get(path, labelSelector=",".join(selector)), "pods")
    finally:
        await client.close()
    pods = sorted(answer.get("items", []), key=lambda p: (namespace_of(p), name_of(p)))
    sys.stdout.write(pod_rows(pods, all_namespaces=args.all_namespaces, now=_now()))
    return 0


HANDLERS: dict[tuple[str, str], Handler] = {
    **{(group, "create"): create for group in KINDS},
    **{(group, "list"): list_ for group in KINDS},
    **{(group, "get"): get for group in KINDS},
    **{(group, "delete"): delete for group in KINDS},
    **{(group, "describe"): describe for group in KINDS},
    ("cronjob", "list"): cronjob_list,
    ("cronjob", "get"): cronjob_get,
    ("cronjob", "suspend"): cronjob_suspend,
    ("cronjob", "resume"): cronjob_resume,
    ("pod", "list"): pod_list,
}

__all__ = ["HANDLERS", "CommandError", "register"]
