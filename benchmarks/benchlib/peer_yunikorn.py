"""bench_scale's ``yunikorn`` system: Apache YuniKorn's standalone scheduler (the k8shim's scheduler command,
yunikorn-core inside the same process; ``build_yunikorn.py``), run against the bench's API server with a
kubeconfig and without its admission controller.

The workload is the bench's own (``translate``): the same pods, each job a YuniKorn application. What the
admission controller would write on a pod, the bench writes: ``schedulerName: yunikorn``, the
``applicationId`` and ``queue`` labels and the submitting user (``yunikorn.apache.org/user.info``). A job
with a PodGroup becomes an application with one task group (``yunikorn.apache.org/task-groups``: minMember =
the PodGroup's, minResource = a member's requests; each pod names it in
``yunikorn.apache.org/task-group-name``) scheduled gang style Hard, so that a gang that cannot be whole
fails instead of running part way. The queue is ``root.bench``, with no limits (``yunikorn-configs``,
``install``).

Placeholders change what "bound" means. For an application with task groups YuniKorn first creates
minMember placeholder pods of its own (``tg-<app>-<group>-<nonce>``, annotation
``internal.yunikorn.apache.org/placeholder``) and binds them one by one as they fit; once the last is bound
the application runs, and each real pod is bound to a placeholder's node in its place (the placeholder
deleted). So a gang's own pods bind whole, after a reservation that itself binds one pod at a time, and
each gang member costs a placeholder's create, bind and delete besides its own bind; the shim creates the
placeholders one API call at a time (where a gang's time goes: ``docs/performance-log.md``). The bench counts
the workload's pods only (``is_placeholder``).

YuniKorn's web app (REST, /ws/v1/metrics) listens on :9080, fixed in yunikorn-core, on every interface:
one YuniKorn at a time on a machine. It has no readiness endpoint: ready is every node schedulable in its
partition (``wait_ready``), which it reaches once its informers have synced and it has registered the
nodes and the pods already there.

YuniKorn's docs ("Evaluate YuniKorn Performance with KWOK") publish 833.3 pods/s: one application of 5,000
pods (no gang) bound within a makespan of 6 s, read off Prometheus' count of scheduled pods at one-second
steps, on KWOK nodes in a cluster tuned by their benchmarking tutorial; five applications of 1,000 gave
555.6, twenty-five of 200, submitted one a second, 156.3. They name the API server as the bound. Here a
one-pod job is an application of its own, as each job is.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.benchlib.systems import LogFile
from volcano_py.api import constants as c
from volcano_py.devcluster import DevCluster

SYSTEM = "yunikorn"
SCHEDULER_NAME = "yunikorn"
NAMESPACE = "yunikorn"  # where it reads its ConfigMaps (its NAMESPACE variable)
CONFIGMAP = "yunikorn-configs"
PARTITION = "default"
QUEUE = "root.bench"
TASK_GROUP = "members"
WEB_PORT = 9080
APP_LABEL = "applicationId"
QUEUE_LABEL = "queue"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
POLICY = "yunikorn.apache.org/schedulingPolicyParameters"
PLACEHOLDER = "internal.yunikorn.apache.org/placeholder"
# The submitting user, as its admission controller records it; without it the shim falls back to a
# deprecated pod label and logs a warning for each pod.
USER_INFO = "yunikorn.apache.org/user.info"
USER = {"user": "bench", "groups": ["system:authenticated"]}
HARD = "gangSchedulingStyle=Hard"  # a gang not whole by the placeholder timeout (15 min) fails
LOG_LEVELS = {"debug": "debug", "info": "info", "warning": "warn", "error": "error", "critical": "error"}
JSON = dict[str, Any]

# One partition, one queue without limits that every application is placed in ("provided": the queue
# label), submissions from anyone (no admission controller writes a user, so each is "nobody").
QUEUES_YAML = f"""\
partitions:
  - name: {PARTITION}
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: {QUEUE.split(".", 1)[1]}
"""


def configmap(log_level: str) -> JSON:
    """``yunikorn-configs``: the queues and the log level (the bench's ``--scheduler-log-level``)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIGMAP, "namespace": NAMESPACE},
        "data": {"queues.yaml": QUEUES_YAML, "log.level": LOG_LEVELS.get(log_level, log_level)},
    }


def install(cluster: DevCluster, log_level: str) -> None:
    """Its namespace and ConfigMap, once per cluster (applied: a second call changes nothing)."""
    manifests = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        configmap(log_level),
    ]
    cluster.kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests})
    )


# -- the workload, in YuniKorn's own terms -------------------------------------------------------------------


def requests_of(pod: JSON) -> dict[str, str]:
    """A member's requests, which its task group's placeholders must cover (one container: the bench's)."""
    containers = pod["spec"]["containers"]
    if len(containers) != 1:
        raise ValueError(f"pod {pod['metadata']['name']}: one container expected, found {len(containers)}")
    return dict((containers[0].get("resources") or {}).get("requests") or {})


def as_member(pod: JSON, app: str, gang: int | None) -> JSON:
    """``pod`` as a pod of application ``app``; with ``gang``, a member of its task group of that minMember.
    The PodGroup annotation is dropped: YuniKorn reads none."""
    body = copy.deepcopy(pod)
    meta = body["metadata"]
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k not in (c.KUBE_GROUP_NAME_KEY, c.VOLCANO_GROUP_NAME_KEY)
    }
    if gang is not None:
        group = {"name": TASK_GROUP, "minMember": gang, "minResource": requests_of(body)}
        annotations.update({TASK_GROUPS: json.dumps([group]), TASK_GROUP_NAME: TASK_GROUP, POLICY: HARD})
    annotations[USER_INFO] = json.dumps(USER)
    meta["annotations"] = annotations
    meta["labels"] = {**(meta.get("labels") or {}), APP_LABEL: app, QUEUE_LABEL: QUEUE}
    body["spec"]["schedulerName"] = SCHEDULER_NAME
    return body


def translate(bodies: Iterable[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    """The bench's (path, body) creates, PodGroups then pods, as YuniKorn's: no PodGroups; a pod of a
    PodGroup becomes a member of its application's task group of the PodGroup's minMember, a pod without
    one an application of its own."""
    bodies = list(bodies)
    gangs = {
        body["metadata"]["name"]: int(body["spec"]["minMember"])
        for path, body in bodies
        if body.get("kind") == c.PODGROUP_KIND
    }
    out: list[tuple[str, JSON]] = []
    for path, body in bodies:
        if body.get("kind") == c.PODGROUP_KIND:
            continue
        group = (body["metadata"].get("annotations") or {}).get(c.KUBE_GROUP_NAME_KEY)
        app = group or body["metadata"]["name"]
        out.append((path, as_member(body, app, gangs.get(group) if group else None)))
    return out


def is_placeholder(pod: JSON) -> bool:
    """A pod YuniKorn made to reserve room for a gang, not one of the workload's."""
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(PLACEHOLDER) == "true"


# -- the process ---------------------------------------------------------------------------------------------


def port_taken(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def launch(binary: Path, kubeconfig: Path, log_file: LogFile) -> subprocess.Popen[bytes]:
    """YuniKorn's scheduler on the bench's cluster: its kubeconfig and ConfigMaps' namespace by environment
    (it takes no flags)."""
    if port_taken(WEB_PORT):
        raise RuntimeError(
            f"port {WEB_PORT} is taken: YuniKorn's web app listens there (fixed in yunikorn-core)"
        )
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), NAMESPACE=NAMESPACE)
    return subprocess.Popen([str(binary)], env=env, stdout=log_file, stderr=log_file)


def schedulable_nodes(nodes: list[JSON]) -> int:
    return sum(1 for node in nodes if node.get("schedulable"))


def wait_ready(process: subprocess.Popen[bytes], nodes: int, within: float = 120.0) -> None:
    """Until every one of the cluster's ``nodes`` is schedulable in its partition."""
    url = f"http://127.0.0.1:{WEB_PORT}/ws/v1/partition/{PARTITION}/nodes"
    deadline = time.monotonic() + within
    seen = 0
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"yunikorn exited with code {process.returncode}; see --scheduler-log")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                seen = schedulable_nodes(json.loads(response.read()) or [])
                if seen >= nodes:
                    return
        except OSError:
            pass
        time.sleep(1.0)
    raise RuntimeError(f"yunikorn not ready within {within}s: {seen} of {nodes} nodes schedulable")
