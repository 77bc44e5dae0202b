"""bench_scale's ``volcano-py-sharded`` system: two ``volcano-py scheduler`` processes, each hard-sharded on
its half of the nodes by a NodeShard of its own, each serving the pods of its own ``schedulerName``.

The bench creates the NodeShards (``nodeshards``) and gives job ``j`` of a backlog the scheduler name
``scheduler_names(system)[j % len(...)]``, so each scheduler gets half the pods and half the nodes.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.benchlib.systems import LogFile, launch_volcano_py_scheduler
from volcano_py.api import constants as c

SYSTEM = "volcano-py-sharded"
# (NodeShard, --scheduler-name) of each scheduler; the first keeps Volcano's default name.
SHARDS = (("shard-a", c.SCHEDULER_NAME), ("shard-b", "volcano-b"))


def scheduler_names(system: str) -> tuple[str, ...]:
    """The ``schedulerName``s a backlog's jobs take in turn."""
    return tuple(name for _, name in SHARDS) if system == SYSTEM else (c.SCHEDULER_NAME,)


def scheduler_of(pod_name: str, names: Sequence[str]) -> str:
    """The scheduler name of a backlog pod ``job<j>-<i>`` (job ``j`` takes ``names[j % len(names)]``)."""
    return names[int(pod_name.removeprefix("job").split("-", 1)[0]) % len(names)]


def nodeshards(node_names: Sequence[str]) -> list[dict[str, Any]]:
    """One NodeShard per scheduler, each desiring its consecutive share of ``node_names``."""
    share = math.ceil(len(node_names) / len(SHARDS))
    return [
        {
            "apiVersion": c.SHARD_API_VERSION,
            "kind": c.NODESHARD_KIND,
            "metadata": {"name": shard},
            "spec": {"nodesDesired": list(node_names[i * share : (i + 1) * share])},
        }
        for i, (shard, _) in enumerate(SHARDS)
    ]


def shard_nodes(node_names: Sequence[str]) -> dict[str, frozenset[str]]:
    """Per scheduler name, the nodes its NodeShard desires."""
    return {
        name: frozenset(shard["spec"]["nodesDesired"])
        for (_, name), shard in zip(SHARDS, nodeshards(node_names), strict=True)
    }


def launch_sharded_schedulers(
    kubeconfig: Path, log_file: LogFile, *, level: str, flags: Sequence[str]
) -> dict[str, tuple[subprocess.Popen[bytes], int]]:
    """Per scheduler name, its process and the port of its /metrics and /readyz."""
    return {
        name: launch_volcano_py_scheduler(
            kubeconfig, log_file, level=level,
            flags=[*flags, "--scheduler-name", name,
                   "--scheduler-sharding-mode", "hard", "--scheduler-sharding-name", shard],
        )
        for shard, name in SHARDS
    }  # fmt: skip
