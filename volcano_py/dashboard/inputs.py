"""Reading what a what-if and a forecast need from the API once (``vcctl job why``, ``vcctl queue get``), and
the conf both run with (``vcctl`` and the dashboard)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from volcano_py.api.common import now_time
from volcano_py.api.objects import name_of, namespace_of
from volcano_py.forecast import Bounds, Forecast, forecast
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import (
    JOBS,
    SESSION_KINDS,
    ResourceKind,
)
from volcano_py.scheduler.core import ClusterObjects, SchedulerConf, load_conf, load_conf_file
from volcano_py.whatif import Budget, WhatIf, what_would_make_it_run
from volcano_py.whatif.jobpods import missing_pods

JSON = dict[str, Any]
# Where `kubectl apply -f deploy/volcano-py.yaml` puts the scheduler's conf (deploy/parts/30-*.yaml).
CONF_NAMESPACE = "volcano-system"
CONF_MAP = "volcano-scheduler-configmap"
CONF_KEY = "volcano-scheduler.conf"


async def _items(client: KubeClient, kind: ResourceKind, *, optional: bool = False) -> tuple[JSON, ...]:
    try:
        answer = await client.get(kind.collection_path())
    except ApiError as err:
        if optional and err.not_found:
            return ()  # e.g. the HyperNode CRD is not installed
        raise
    return tuple(answer.get("items", []))


async def read_objects(client: KubeClient) -> ClusterObjects:
    read: dict[str, Any] = {
        field: await _items(client, kind, optional=optional) for field, kind, optional in SESSION_KINDS
    }
    return ClusterObjects(**read)


async def scheduler_conf(client: KubeClient, path: str | None) -> tuple[SchedulerConf, str]:
    """The conf to run what-ifs with, and where it came from: ``path``, the deployed ConfigMap, or the
    built-in default."""
    if path:
        return load_conf_file(path), path
    try:
        cm = await client.get(f"/api/v1/namespaces/{CONF_NAMESPACE}/configmaps/{CONF_MAP}")
        text = (cm.get("data") or {}).get(CONF_KEY)
        if text:
            return load_conf(text), f"ConfigMap {CONF_NAMESPACE}/{CONF_MAP}"
    except ApiError:
        pass  # not deployed with the bundle (e.g. `volcano-py up`), or not allowed to read it
    return load_conf(None), "the built-in default conf"


@dataclass(frozen=True, slots=True)
class Reading:
    """The cluster as read once: what a session reads, the Volcano Jobs, and the conf (and where from)."""

    objects: ClusterObjects
    jobs: tuple[JSON, ...]
    conf: SchedulerConf
    source: str


async def read(client: KubeClient, conf_path: str | None) -> Reading:
    objects = await read_objects(client)
    jobs = await _items(client, JOBS, optional=True)
    conf, source = await scheduler_conf(client, conf_path)
    return Reading(objects, jobs, conf, source)


def what_if(reading: Reading, podgroup: JSON, job: JSON | None, *, budget: Budget) -> WhatIf:
    key = f"{namespace_of(podgroup) or 'default'}/{name_of(podgroup)}"
    now = now_time()
    objects = reading.objects
    extra = missing_pods(job, key, objects.pods, created=now)
    return what_would_make_it_run(objects, key, reading.conf, now=now, extra_pods=extra, budget=budget)


def eta(reading: Reading, *, bounds: Bounds) -> Forecast:
    return forecast(reading.objects, reading.conf, datetime.now(UTC), jobs=reading.jobs, bounds=bounds)
