"""The invariant every evicting action keeps: no gang is left partly evicted.

A job evicted below its ``minAvailable`` while keeping some pods would hold room it cannot run in. So after a
session's decisions, every PodGroup that lost a pod either keeps at least ``minMember`` pods (counting those
the same session binds or pipelines for it) or keeps none. Checked on the plain objects the session read and
the result it returned, so the simulator and tests can assert it without a session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.scheduling import group_key_of

from .decisions import SessionResult

_DONE = (PodPhase.SUCCEEDED, PodPhase.FAILED)


def gangs_left_partly_evicted(
    pods: Iterable[Mapping[str, Any]], podgroups: Iterable[Mapping[str, Any]], result: SessionResult
) -> list[str]:
    """The PodGroups (``namespace/name``) the session's evictions leave with 0 < pods < ``minMember``, each
    with its counts."""
    evicted = {e.uid for e in result.evictions}
    if not evicted:
        return []
    placed = {b.uid for b in result.binds} | {p.uid for p in result.pipelined}
    holding: dict[str, int] = {}
    touched: set[str] = set()
    for pod in pods:
        group = group_key_of(pod)
        if group is None:
            continue
        meta = pod.get("metadata") or {}
        uid = meta.get("uid")
        if uid in evicted:
            touched.add(group)
            continue
        on_node = bool((pod.get("spec") or {}).get("nodeName")) and pod_phase(pod) not in _DONE
        if (on_node and not meta.get("deletionTimestamp")) or uid in placed:
            holding[group] = holding.get(group, 0) + 1
    minimums: dict[str, int] = {}
    for pg in podgroups:
        meta = pg.get("metadata") or {}
        minimums[f"{meta.get('namespace', 'default')}/{meta.get('name')}"] = int(
            (pg.get("spec") or {}).get("minMember") or 1
        )
    out = []
    for group in sorted(touched):
        keeps, minimum = holding.get(group, 0), minimums.get(group, 1)
        if 0 < keeps < minimum:
            out.append(f"{group} keeps {keeps} of its minMember {minimum} pods after evictions")
    return out
