"""The objects vcctl creates, built without I/O so they can be checked in tests."""

from __future__ import annotations

from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.job_defaults import default_task_name
from volcano_py.api.objects import name_of, uid_of
from volcano_py.api.scheduling import QueueState
from volcano_py.resources import QuantityError, parse_quantity

JSON = dict[str, Any]


class UsageError(ValueError):
    """A flag value vcctl cannot use; the message names the flag and the fix."""


def parse_resource_list(spec: str, *, flag: str) -> dict[str, str]:
    """``"cpu=1000m,memory=100Mi"`` -> ``{"cpu": "1000m", "memory": "100Mi"}``, every quantity checked."""
    if not spec:
        return {}
    out: dict[str, str] = {}
    for statement in spec.split(","):
        name, sep, value = statement.partition("=")
        if not sep or not name or not value or "=" in value:
            raise UsageError(
                f"{flag}: {statement!r} is not <resource>=<quantity>; write e.g. cpu=1000m,memory=100Mi"
            )
        try:
            parse_quantity(value)
        except QuantityError as err:
            raise UsageError(f"{flag}: {name}: {err}") from None
        out[name] = value
    return out


def job_from_flags(
    *,
    name: str,
    namespace: str,
    image: str,
    min_available: int,
    replicas: int,
    requests: dict[str, str],
    limits: dict[str, str],
    scheduler: str,
    queue: str | None = None,
) -> JSON:
    """The one-task Job ``vcctl job run`` submits when no file is given."""
    if not name:
        raise UsageError("--name: job name cannot be left blank; pass --name NAME (or -N NAME)")
    if replicas < 1:
        raise UsageError(f"--replicas: must be at least 1, got {replicas}")
    if not 0 <= min_available <= replicas:
        raise UsageError(f"--min: must be between 0 and --replicas ({replicas}), got {min_available}")
    container: JSON = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    resources: JSON = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if resources:
        container["resources"] = resources
    spec: JSON = {
        "minAvailable": min_available,
        "schedulerName": scheduler,
        "tasks": [
            {
                "name": default_task_name(0),
                "replicas": replicas,
                "template": {
                    "metadata": {"name": name, "labels": {"job.volcano.sh": name}},
                    "spec": {"restartPolicy": "Never", "containers": [container]},
                },
            }
        ],
    }
    if queue:
        spec["queue"] = queue
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def command_for(target: JSON, *, action: str, namespace: str) -> JSON:
    """A ``bus.volcano.sh`` Command aimed at ``target`` (a Job or a Queue) and owned by it, as in Volcano."""
    name = name_of(target)
    owner = {
        "apiVersion": target["apiVersion"],
        "kind": target["kind"],
        "name": name,
        "uid": uid_of(target),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": c.BUS_API_VERSION,
        "kind": c.COMMAND_KIND,
        "metadata": {
            "generateName": f"{name}-{action.lower()}-",
            "namespace": namespace,
            "ownerReferences": [owner],
        },
        "target": owner,
        "action": action,
    }


def queue_object(*, name: str, weight: int, state: str, parent: str | None = None) -> JSON:
    if weight < 1:
        raise UsageError(f"--weight: must be a positive integer, got {weight}")
    if state not in (QueueState.OPEN, QueueState.CLOSED):
        raise UsageError(f"--state: must be Open or Closed, got {state!r}")
    spec: JSON = {"weight": weight}
    if parent:
        spec["parent"] = parent
    return {
        "apiVersion": c.SCHEDULING_API_VERSION,
        "kind": c.QUEUE_KIND,
        "metadata": {"name": name},
        "spec": spec,
        "status": {"state": state},
    }
