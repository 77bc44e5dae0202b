"""Telling a pod that the agent scheduler found no node for it, as kube-scheduler does: its ``PodScheduled``
condition set to ``False`` with reason ``Unschedulable`` and the session's explanation, and a
``FailedScheduling`` Event.

A pod no node can take is tried again after every event that can help, and each attempt explains it anew;
it is told once per distinct message, not once per attempt. The writes go through the binder's fence and
tasks, so a deposed leader tells nothing and the attempt does not wait for the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.objects import name_of, namespace_of
from volcano_py.kube import patch
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.events import WARNING, EventRecorder
from volcano_py.kube.kinds import object_identity
from volcano_py.log import get_logger
from volcano_py.scheduler.runtime.binder import Binder

_log = get_logger(__name__)


class UnschedulableTeller:
    """Remembers the message last told to each waiting pod (by key) until ``forget``."""

    def __init__(self, client: KubeClient, recorder: EventRecorder, binder: Binder) -> None:
        self.client = client
        self.recorder = recorder
        self.binder = binder
        self._told: dict[str, str] = {}

    def tell(self, key: str, pod: Mapping[str, Any], message: str) -> None:
        if self._told.get(key) == message:
            return
        self._told[key] = message
        self.binder.spawn(self._write(pod, message))

    def forget(self, key: str) -> None:
        """The pod no longer waits: if it waits again, it is told again."""
        self._told.pop(key, None)

    async def _write(self, pod: Mapping[str, Any], message: str) -> None:
        if self.binder.may_write(f"pod condition {namespace_of(pod)}/{name_of(pod)}") is False:
            return
        try:
            await patch.set_pod_condition(
                self.client,
                namespace_of(pod),
                name_of(pod),
                patch.condition("PodScheduled", "False", "Unschedulable", message),
            )
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.warning("could not mark the pod unschedulable", pod=object_identity(pod), error=repr(exc))
            return
        self.recorder.record(dict(pod), WARNING, "FailedScheduling", message)
