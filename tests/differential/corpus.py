"""Generated manifests for the differential test of ``volcano-py validate`` against a real API server.

Each case is a mostly-valid object of one kind we validate, with at most one targeted mutation (a bad name, a
negative count, a missing required field, a bad enum value or quantity, ...). Both sides judge the same
object: ``tests/integration/test_validate_differential.py`` samples a few hundred cases for CI and
``benchmarks/validate_differential.py`` runs many more.

A mutation says what the two sides should make of it. ``SAME`` (most): they must agree. ``STRICTER``: a
check volcano-py makes on purpose that no API server does (a Command action the bus controller does not know,
a Numatopology policy the plugin cannot read): we refuse and the API server accepts. A mutation's ``area``
names the family of rules it exercises with another engine's semantics (Go's regexp, robfig's cron, the API
server's CEL), so the benchmarks can report them apart.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Final, Literal

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

JSON = dict[str, Any]
Draw = Callable[[st.SearchStrategy[Any]], Any]
Expect = Literal["same", "stricter"]
SAME: Final[Expect] = "same"
STRICTER: Final[Expect] = "stricter"

LABEL_KEY: Final = "volcano-py.test/differential"
DRIVER: Final = "gpu.example.com"


@dataclass(frozen=True)
class Mutation:
    name: str
    apply: Callable[[JSON, Draw], None]
    expect: Expect = SAME
    area: str | None = None


@dataclass(frozen=True)
class Case:
    kind: str
    namespaced: bool
    mutation: str
    expect: Expect
    area: str | None
    obj: JSON

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.mutation}"

    def placed(self, namespace: str, label_value: str) -> JSON:
        """The object as sent: in ``namespace`` when namespaced, carrying the label our webhooks select on."""
        obj = copy.deepcopy(self.obj)
        metadata = obj.setdefault("metadata", {})
        if self.namespaced:
            metadata["namespace"] = namespace
        labels = metadata.get("labels")
        metadata["labels"] = {**(labels if isinstance(labels, dict) else {}), LABEL_KEY: label_value}
        return obj


# --- values -------------------------------------------------------------------------------------------------

# "dc-" first: never "default" or "root", which exist on the cluster and would make a create conflict.
NAMES: Final = st.from_regex(r"dc-[a-z0-9]{1,8}(-[a-z0-9]{1,5})?", fullmatch=True)
LABEL_NAMES: Final = st.from_regex(r"[a-z]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
BAD_NAMES: Final = st.sampled_from(
    ["Upper-Case", "a" * 254, "under_score", "-lead", "trail-", "sp ace", "a/b", "ok..dots", "UPPER"]
)
LABEL_ONLY_BAD: Final = st.sampled_from(["a" * 64, "dot.ted", "Upper", "under_score", "trail-"])
CPU: Final = st.sampled_from(["100m", "1", "2", "500m", "0.5"])
MEMORY: Final = st.sampled_from(["64Mi", "1Gi", "256Mi", "1G"])
BAD_QUANTITIES: Final = st.sampled_from(["1x", "one", "-1", "1.5.5", "1e", "--1", "1Gb", ""])
BAD_RESOURCE_NAMES: Final = st.sampled_from(["foo", "Bad_Name/gpu", "example.com/", "a b", "/gpu"])
BAD_DOMAINS: Final = st.sampled_from(["model", "Bad_Domain/model", "-x.com/model", "ex.com/", "/model"])
BAD_DRIVERS: Final = st.sampled_from(["", "Not_A_Domain", "UPPER.example.com", "a" * 64 + ".com", "-x.com"])


def _set(obj: JSON, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    here: Any = obj
    for key in parents:
        here = here[int(key)] if isinstance(here, list) else here.setdefault(key, {})
    if isinstance(here, list):
        here[int(last)] = value
    else:
        here[last] = value


def _del(obj: JSON, path: str) -> None:
    *parents, last = path.split(".")
    here: Any = obj
    for key in parents:
        here = here[int(key)] if isinstance(here, list) else here[key]
    if isinstance(here, list):
        del here[int(last)]
    else:
        here.pop(last, None)


def _get(obj: JSON, path: str) -> Any:
    here: Any = obj
    for key in path.split("."):
        here = here[int(key)] if isinstance(here, list) else here[key]
    return here


def put(path: str, values: st.SearchStrategy[Any]) -> Callable[[JSON, Draw], None]:
    return lambda obj, draw: _set(obj, path, draw(values))


def drop(path: str) -> Callable[[JSON, Draw], None]:
    return lambda obj, draw: _del(obj, path)


def const(path: str, value: Any) -> Callable[[JSON, Draw], None]:
    return lambda obj, draw: _set(obj, path, copy.deepcopy(value))


# --- pod specs (Pods, and the templates of Jobs) ------------------------------------------------------------


@st.composite
def container(draw: Draw, name: str = "main") -> JSON:
    out: JSON = {"name": name, "image": draw(st.sampled_from(["busybox", "busybox:1.36", "nginx"]))}
    requests = {"cpu": draw(CPU)}
    if draw(st.booleans()):
        requests["memory"] = draw(MEMORY)
    out["resources"] = {"requests": requests}
    if draw(st.booleans()):
        out["resources"]["limits"] = dict(requests)
    return out


@st.composite
def pod_spec(draw: Draw, scheduler: str | None = None) -> JSON:
    count = draw(st.integers(1, 2))
    spec: JSON = {"containers": [draw(container(name=f"c{i}")) for i in range(count)]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if draw(st.booleans()):
        spec["restartPolicy"] = draw(st.sampled_from(["Always", "OnFailure", "Never"]))
    if draw(st.booleans()):
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return spec


def pod_spec_mutations(at: str) -> list[Mutation]:
    """Mutations of the pod spec at ``at`` (a Pod's ``spec``, a Job task's ``template.spec``)."""
    c0 = f"{at}.containers.0"
    return [
        Mutation("container-name-bad", put(f"{c0}.name", LABEL_ONLY_BAD)),
        Mutation("container-image-missing", drop(f"{c0}.image")),
        Mutation("containers-empty", const(f"{at}.containers", [])),
        Mutation("container-duplicate", lambda o, d: _get(o, f"{at}.containers").append(_get(o, c0))),
        Mutation("request-quantity-bad", put(f"{c0}.resources.requests.cpu", BAD_QUANTITIES)),
        Mutation("request-negative", const(f"{c0}.resources.requests.memory", "-1Gi")),
        Mutation(
            "limit-below-request",
            const(f"{c0}.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
        ),
        Mutation(
            "resource-name-bad",
            lambda o, d: _set(o, f"{c0}.resources", {"requests": {d(BAD_RESOURCE_NAMES): "1"}}),
        ),
        Mutation(
            "extended-resource-fractional",
            const(
                f"{c0}.resources",
                {"requests": {"nvidia.com/gpu": "500m"}, "limits": {"nvidia.com/gpu": "500m"}},
            ),
        ),
        Mutation(
            "extended-resource-no-limit", const(f"{c0}.resources", {"requests": {"nvidia.com/gpu": "1"}})
        ),
        Mutation("restart-policy-bad", put(f"{at}.restartPolicy", st.sampled_from(["Sometimes", "always"]))),
        Mutation("restart-policy-empty", const(f"{at}.restartPolicy", "")),
        Mutation(
            "toleration-operator-bad",
            const(f"{at}.tolerations", [{"key": "gpu", "operator": "Maybe", "effect": "NoSchedule"}]),
        ),
        Mutation(
            "toleration-exists-with-value",
            const(f"{at}.tolerations", [{"key": "gpu", "operator": "Exists", "value": "x"}]),
        ),
        Mutation(
            "toleration-effect-bad",
            const(f"{at}.tolerations", [{"key": "gpu", "operator": "Exists", "effect": "Never"}]),
        ),
        Mutation("node-selector-bad-key", const(f"{at}.nodeSelector", {"Bad Key!": "x"})),
        Mutation("node-selector-bad-value", const(f"{at}.nodeSelector", {"zone": "not valid!"})),
        Mutation("priority-class-bad", put(f"{at}.priorityClassName", BAD_NAMES)),
        Mutation(
            "scheduler-name-free-form", put(f"{at}.schedulerName", st.sampled_from(["Bad Name", "a/b/c"]))
        ),
    ]


# --- Volcano kinds ------------------------------------------------------------------------------------------

BATCH = "batch.volcano.sh/v1alpha1"
SCHEDULING = "scheduling.volcano.sh/v1beta1"
FLOW = "flow.volcano.sh/v1alpha1"
RESOURCE = "resource.k8s.io/v1"
POLICY_EVENTS: Final = ["PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed"]
POLICY_ACTIONS: Final = ["AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob", "CompleteJob"]


@st.composite
def job_spec(draw: Draw) -> JSON:
    names = draw(st.lists(LABEL_NAMES, min_size=1, max_size=3, unique=True))
    tasks = []
    for name in names:
        task: JSON = {"name": name, "replicas": draw(st.integers(1, 4)), "template": {}}
        task["template"] = {"spec": draw(pod_spec())}
        if draw(st.booleans()):
            task["minAvailable"] = draw(st.integers(0, task["replicas"]))
        tasks.append(task)
    spec: JSON = {"schedulerName": "volcano", "queue": "default", "tasks": tasks}
    if draw(st.booleans()):
        spec["minAvailable"] = draw(st.integers(0, sum(t["replicas"] for t in tasks)))
    if draw(st.booleans()):
        spec["maxRetry"] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        event, action = draw(st.sampled_from(POLICY_EVENTS)), draw(st.sampled_from(POLICY_ACTIONS))
        spec["policies"] = [{"event": event, "action": action}]
    if draw(st.booleans()):
        spec["ttlSecondsAfterFinished"] = draw(st.integers(0, 600))
    return spec


def _replicas_zero(at: str) -> Callable[[JSON, Draw], None]:
    """Task 0 with no replicas, and no minAvailable that would then exceed them (another rule)."""

    def apply(obj: JSON, draw: Draw) -> None:
        _set(obj, f"{at}.tasks.0.replicas", 0)
        _del(obj, f"{at}.tasks.0.minAvailable")
        _del(obj, f"{at}.minAvailable")

    return apply


def job_spec_mutations(at: str) -> list[Mutation]:
    t0 = f"{at}.tasks.0"
    return [
        Mutation("min-available-negative", put(f"{at}.minAvailable", st.integers(-5, -1))),
        Mutation("min-available-above-replicas", const(f"{at}.minAvailable", 1000)),
        Mutation("max-retry-negative", put(f"{at}.maxRetry", st.integers(-3, -1))),
        Mutation("min-success-zero", put(f"{at}.minSuccess", st.integers(-1, 0))),
        Mutation("ttl-negative", const(f"{at}.ttlSecondsAfterFinished", -1)),
        Mutation("tasks-empty", const(f"{at}.tasks", [])),
        Mutation("tasks-missing", drop(f"{at}.tasks")),
        Mutation("task-replicas-negative", put(f"{t0}.replicas", st.integers(-3, -1))),
        Mutation("task-replicas-zero", _replicas_zero(at)),
        Mutation("task-min-available-above-replicas", const(f"{t0}.minAvailable", 99)),
        Mutation("task-name-bad", put(f"{t0}.name", LABEL_ONLY_BAD)),
        Mutation(
            "task-name-duplicate", lambda o, d: _get(o, f"{at}.tasks").append(copy.deepcopy(_get(o, t0)))
        ),
        Mutation("task-template-missing", drop(f"{t0}.template")),
        Mutation("task-topology-policy-bad", const(f"{t0}.topologyPolicy", "sometimes")),
        Mutation("queue-name-bad", put(f"{at}.queue", st.sampled_from(["Default", "my_queue", "q!"]))),
        Mutation("priority-class-name-bad", put(f"{at}.priorityClassName", BAD_NAMES)),
        Mutation(
            "policy-event-bad", const(f"{at}.policies", [{"event": "PodExploded", "action": "AbortJob"}])
        ),
        Mutation("policy-action-bad", const(f"{at}.policies", [{"event": "PodFailed", "action": "Explode"}])),
        Mutation("policy-no-action", const(f"{at}.policies", [{"event": "PodFailed"}])),
        Mutation(
            "policy-event-and-exit-code",
            const(f"{at}.policies", [{"event": "PodFailed", "exitCode": 1, "action": "AbortJob"}]),
        ),
        Mutation("policy-exit-code-zero", const(f"{at}.policies", [{"exitCode": 0, "action": "AbortJob"}])),
        Mutation(
            "policy-duplicate-event",
            const(
                f"{at}.policies",
                [
                    {"event": "PodFailed", "action": "AbortJob"},
                    {"event": "PodFailed", "action": "RestartJob"},
                ],
            ),
        ),
        Mutation("network-topology-mode-bad", const(f"{at}.networkTopology", {"mode": "strict"})),
        Mutation("volume-mount-path-bad", const(f"{at}.volumes", [{"mountPath": "a:b"}])),
        Mutation("volume-mount-path-missing", const(f"{at}.volumes", [{"volumeClaimName": "data"}])),
        Mutation("unknown-field", const(f"{at}.replica", 3)),
        Mutation("plugin-unknown", const(f"{at}.plugins", {"nonesuch": []})),
        *pod_spec_mutations(f"{t0}.template.spec"),
    ]


# Mutations of a pod spec that leave it valid: the API server takes an empty restartPolicy as Always, and any
# string as a schedulerName.
POD_SPEC_VALID: Final = frozenset({"restart-policy-empty", "scheduler-name-free-form"})
# Job admission's rules, beyond the CRD schema. Volcano has no JobTemplate webhook: a template's Job spec
# meets them when a JobFlow makes a Job of it, while ``volcano-py validate`` reports them at once.
JOB_ADMISSION_ONLY: Final = frozenset(
    {
        "min-available-above-replicas",
        "tasks-missing",
        "task-min-available-above-replicas",
        "task-name-duplicate",
        "task-template-missing",
        "policy-no-action",
        "policy-event-and-exit-code",
        "policy-exit-code-zero",
        "policy-duplicate-event",
        "plugin-unknown",
    }
    | {m.name for m in pod_spec_mutations("spec") if m.name not in POD_SPEC_VALID}
)


def template_mutations(at: str) -> list[Mutation]:
    """A JobTemplate's: the Job spec's, those of Job admission expected only from us."""
    return [
        dataclasses.replace(m, expect=STRICTER) if m.name in JOB_ADMISSION_ONLY else m
        for m in job_spec_mutations(at)
    ]


def name_mutations() -> list[Mutation]:
    return [
        Mutation("name-bad", put("metadata.name", BAD_NAMES)),
        Mutation("name-missing", drop("metadata.name")),
        Mutation("label-value-bad", const("metadata.labels", {"app": "not valid!"})),
        Mutation("label-key-bad", const("metadata.labels", {"Bad Key/x": "v"})),
        Mutation("annotation-key-bad", const("metadata.annotations", {"bad key": "v"})),
    ]


@st.composite
def job(draw: Draw) -> JSON:
    return {"apiVersion": BATCH, "kind": "Job", "metadata": {"name": draw(NAMES)}, "spec": draw(job_spec())}


@st.composite
def job_template(draw: Draw) -> JSON:
    return {
        "apiVersion": FLOW,
        "kind": "JobTemplate",
        "metadata": {"name": draw(NAMES)},
        "spec": draw(job_spec()),
    }


@st.composite
def cronjob(draw: Draw) -> JSON:
    spec: JSON = {
        "schedule": draw(st.sampled_from(["*/5 * * * *", "0 3 * * 1", "@hourly", "15 */2 * * *"])),
        "jobTemplate": {"spec": draw(job_spec())},
    }
    if draw(st.booleans()):
        spec["concurrencyPolicy"] = draw(st.sampled_from(["Allow", "Forbid", "Replace"]))
    if draw(st.booleans()):
        spec["successfulJobsHistoryLimit"] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        spec["startingDeadlineSeconds"] = draw(st.integers(0, 300))
    return {"apiVersion": BATCH, "kind": "CronJob", "metadata": {"name": draw(NAMES)}, "spec": spec}


CRONJOB_MUTATIONS: Final = [
    Mutation("schedule-missing", drop("spec.schedule")),
    Mutation(
        "schedule-bad",
        put("spec.schedule", st.sampled_from(["* * *", "61 * * * *", "every day"])),
        area="cron",
    ),
    Mutation("job-template-missing", drop("spec.jobTemplate")),
    Mutation("concurrency-policy-bad", const("spec.concurrencyPolicy", "Sometimes")),
    Mutation("history-limit-negative", const("spec.failedJobsHistoryLimit", -1)),
    Mutation("deadline-negative", const("spec.startingDeadlineSeconds", -5)),
    Mutation("time-zone-bad", const("spec.timeZone", "Mars/Olympus")),
    Mutation("job-min-available-negative", const("spec.jobTemplate.spec.minAvailable", -1)),
    Mutation("job-task-name-bad", put("spec.jobTemplate.spec.tasks.0.name", LABEL_ONLY_BAD)),
    Mutation("job-tasks-empty", const("spec.jobTemplate.spec.tasks", [])),
    Mutation("job-task-replicas-negative", const("spec.jobTemplate.spec.tasks.0.replicas", -1)),
]


@st.composite
def jobflow(draw: Draw) -> JSON:
    names = draw(st.lists(LABEL_NAMES, min_size=1, max_size=3, unique=True))
    flows: list[JSON] = [{"name": names[0]}]
    flows += [{"name": name, "dependsOn": {"targets": [names[i]]}} for i, name in enumerate(names[1:])]
    spec: JSON = {"flows": flows}
    if draw(st.booleans()):
        spec["jobRetainPolicy"] = draw(st.sampled_from(["retain", "delete"]))
    return {"apiVersion": FLOW, "kind": "JobFlow", "metadata": {"name": draw(NAMES)}, "spec": spec}


JOBFLOW_MUTATIONS: Final = [
    Mutation("retain-policy-bad", const("spec.jobRetainPolicy", "keep")),
    Mutation("flow-name-missing", drop("spec.flows.0.name")),
    Mutation("flow-duplicate", lambda o, d: o["spec"]["flows"].append(copy.deepcopy(o["spec"]["flows"][0]))),
    Mutation("depends-on-unknown", const("spec.flows.0.dependsOn", {"targets": ["nonesuch"]})),
    Mutation(
        "depends-on-self",
        lambda o, d: _set(o, "spec.flows.0.dependsOn", {"targets": [o["spec"]["flows"][0]["name"]]}),
    ),
    Mutation("flow-name-bad", put("spec.flows.0.name", LABEL_ONLY_BAD)),
    Mutation("unknown-field", const("spec.flow", [])),
]


@st.composite
def podgroup(draw: Draw) -> JSON:
    spec: JSON = {"minMember": draw(st.integers(0, 8)), "queue": "default"}
    if draw(st.booleans()):
        spec["minResources"] = {"cpu": draw(CPU), "memory": draw(MEMORY)}
    if draw(st.booleans()):
        spec["minTaskMember"] = {"worker": draw(st.integers(0, 4))}
    return {"apiVersion": SCHEDULING, "kind": "PodGroup", "metadata": {"name": draw(NAMES)}, "spec": spec}


PODGROUP_MUTATIONS: Final = [
    Mutation("min-member-negative", put("spec.minMember", st.integers(-5, -1))),
    Mutation("min-resources-bad", put("spec.minResources.cpu", BAD_QUANTITIES)),
    Mutation(
        "min-resources-name-bad", lambda o, d: _set(o, "spec.minResources", {d(BAD_RESOURCE_NAMES): "1"})
    ),
    Mutation("queue-name-bad", put("spec.queue", st.sampled_from(["Default", "my_queue"]))),
    Mutation("network-topology-mode-bad", const("spec.networkTopology", {"mode": "strict"})),
    Mutation("min-task-member-negative", const("spec.minTaskMember", {"worker": -1})),
    Mutation("unknown-field", const("spec.minMembers", 2)),
]


@st.composite
def queue(draw: Draw) -> JSON:
    spec: JSON = {"weight": draw(st.integers(1, 100))}
    if draw(st.booleans()):
        spec["capability"] = {"cpu": draw(st.sampled_from(["10", "64", "100"])), "memory": "128Gi"}
    if draw(st.booleans()):
        spec["reclaimable"] = draw(st.booleans())
    if draw(st.booleans()):
        spec["priority"] = draw(st.integers(0, 100))
    return {"apiVersion": SCHEDULING, "kind": "Queue", "metadata": {"name": draw(NAMES)}, "spec": spec}


QUEUE_MUTATIONS: Final = [
    Mutation("weight-zero", put("spec.weight", st.integers(-3, 0))),
    Mutation("weight-too-big", const("spec.weight", 70000)),
    Mutation("capability-bad", put("spec.capability", BAD_QUANTITIES.map(lambda q: {"cpu": q}))),
    Mutation("capability-negative", const("spec.capability", {"cpu": "-1"})),
    Mutation("dequeue-strategy-bad", const("spec.dequeueStrategy", "lifo")),
    Mutation("priority-negative", const("spec.priority", -1)),
    Mutation(
        "guarantee-above-capability",
        const("spec", {"weight": 1, "capability": {"cpu": "2"}, "guarantee": {"resource": {"cpu": "4"}}}),
    ),
    Mutation(
        "deserved-above-capability",
        const("spec", {"weight": 1, "capability": {"cpu": "2"}, "deserved": {"cpu": "4"}}),
    ),
    Mutation("parent-bad", const("spec.parent", "Not_A_Queue")),
    Mutation("unknown-field", const("spec.weigth", 2)),
]


@st.composite
def command(draw: Draw) -> JSON:
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": draw(NAMES)},
        "action": draw(
            st.sampled_from(["AbortJob", "RestartJob", "ResumeJob", "TerminateJob", "CompleteJob"])
        ),
        "target": {
            "apiVersion": BATCH,
            "kind": "Job",
            "name": draw(NAMES),
            "uid": "2f0b6c46-9f5a-4a7e-8b1e-0c5a4f1d2e3f",
        },
    }


COMMAND_MUTATIONS: Final = [
    # The bus controller drops a Command whose action it does not know; no schema says so.
    Mutation("action-bad", const("action", "Explode"), expect=STRICTER),
    Mutation("action-missing", drop("action"), expect=STRICTER),
    Mutation("target-missing", drop("target"), expect=STRICTER),
    Mutation("target-uid-missing", drop("target.uid")),
    Mutation("target-name-missing", drop("target.name")),
    Mutation("unknown-field", const("actions", "AbortJob")),
]


@st.composite
def hypernode(draw: Draw) -> JSON:
    members = [
        {"type": "Node", "selector": {"exactMatch": {"name": f"node-{i}"}}}
        for i in range(draw(st.integers(1, 3)))
    ]
    if draw(st.booleans()):
        members.append({"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r1"}}}})
    spec = {"tier": draw(st.integers(1, 3)), "members": members}
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": draw(NAMES)},
        "spec": spec,
    }


HYPERNODE_MUTATIONS: Final = [
    Mutation("tier-negative", const("spec.tier", -1)),
    Mutation("tier-missing", drop("spec.tier")),
    Mutation("member-type-bad", const("spec.members.0.type", "Rack")),
    Mutation("members-empty", const("spec.members", [])),
    Mutation(
        "selector-two-kinds",
        const(
            "spec.members.0.selector",
            {"exactMatch": {"name": "node-0"}, "regexMatch": {"pattern": "node-.*"}},
        ),
    ),
    Mutation("selector-empty", const("spec.members.0.selector", {})),
    Mutation("exact-name-bad", put("spec.members.0.selector.exactMatch.name", BAD_NAMES)),
    Mutation("exact-name-empty", const("spec.members.0.selector.exactMatch.name", "")),
    Mutation(
        "regex-pattern",
        put(
            "spec.members.0.selector",
            st.sampled_from(["node-[0-9]+", "(", "a(?=b)", "\\p{L}+", "[z-a]"]).map(
                lambda p: {"regexMatch": {"pattern": p}}
            ),
        ),
        area="regex",
    ),
    Mutation(
        "hypernode-with-label-match",
        const(
            "spec.members.0", {"type": "HyperNode", "selector": {"labelMatch": {"matchLabels": {"a": "b"}}}}
        ),
    ),
    Mutation("tier-name-too-long", const("spec.tierName", "t" * 254)),
    Mutation("unknown-field", const("spec.teir", 1)),
]


@st.composite
def numatopology(draw: Draw) -> JSON:
    cpus = draw(st.integers(1, 8))
    spec: JSON = {
        "policies": {
            "CPUManagerPolicy": "static",
            "TopologyManagerPolicy": draw(st.sampled_from(["none", "best-effort", "single-numa-node"])),
        },
        "numares": {"cpu": {"allocatable": f"0-{cpus - 1}" if cpus > 1 else "0", "capacity": cpus}},
    }
    return {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": draw(NAMES)},
        "spec": spec,
    }


NUMATOPOLOGY_MUTATIONS: Final = [
    # The numa-aware plugin reads only the policy names and cpusets it knows; the schema takes any string.
    Mutation("policy-unknown", const("spec.policies.Nonesuch", "x"), expect=STRICTER),
    Mutation("cpuset-bad", const("spec.numares.cpu.allocatable", "3-1"), expect=STRICTER),
    Mutation("capacity-string", const("spec.numares.cpu.capacity", "four")),
    Mutation("unknown-field", const("spec.numa", {})),
]


# --- core kinds ---------------------------------------------------------------------------------------------


@st.composite
def pod(draw: Draw) -> JSON:
    spec = draw(pod_spec(scheduler=draw(st.sampled_from(["volcano", "default-scheduler"]))))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": draw(NAMES)}, "spec": spec}


def _host_port(host_network: bool, same: bool) -> Callable[[JSON, Draw], None]:
    def apply(obj: JSON, draw: Draw) -> None:
        port = draw(st.integers(1024, 9000))
        c0 = obj["spec"]["containers"][0]
        c0["ports"] = [{"containerPort": port, "hostPort": port if same else port + 1}]
        if host_network:
            obj["spec"]["hostNetwork"] = True

    return apply


def _spread(**changes: Any) -> Callable[[JSON, Draw], None]:
    base = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}},
    }
    constraint = {**base, **changes}
    return const("spec.topologySpreadConstraints", [{k: v for k, v in constraint.items() if v is not None}])


POD_MUTATIONS: Final = [
    Mutation("host-port", _host_port(False, same=False)),
    Mutation("host-network-port-equal", _host_port(True, same=True)),
    Mutation("host-network-port-differs", _host_port(True, same=False)),
    Mutation("container-port-zero", const("spec.containers.0.ports", [{"containerPort": 0}])),
    Mutation("container-port-too-big", const("spec.containers.0.ports", [{"containerPort": 70000}])),
    Mutation(
        "port-protocol-bad", const("spec.containers.0.ports", [{"containerPort": 80, "protocol": "ICMP"}])
    ),
    Mutation("spread-valid", _spread()),
    Mutation("spread-max-skew-zero", lambda o, d: _spread(maxSkew=d(st.integers(-2, 0)))(o, d)),
    Mutation("spread-when-unsatisfiable-bad", _spread(whenUnsatisfiable="Sometimes")),
    Mutation("spread-topology-key-missing", _spread(topologyKey=None)),
    Mutation(
        "spread-min-domains-without-donotschedule", _spread(whenUnsatisfiable="ScheduleAnyway", minDomains=2)
    ),
    Mutation("spread-min-domains-zero", _spread(minDomains=0)),
    Mutation(
        "spread-duplicate",
        lambda o, d: (
            _spread()(o, d),
            o["spec"]["topologySpreadConstraints"].append(
                copy.deepcopy(o["spec"]["topologySpreadConstraints"][0])
            ),
        ),
    ),
    Mutation("spread-node-affinity-policy-bad", _spread(nodeAffinityPolicy="Maybe")),
    Mutation(
        "affinity-operator-bad",
        const(
            "spec.affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}
                        ]
                    }
                }
            },
        ),
    ),
    Mutation(
        "affinity-in-without-values",
        const(
            "spec.affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
                    }
                }
            },
        ),
    ),
    Mutation(
        "pod-affinity-topology-key-missing",
        const(
            "spec.affinity",
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"a": "b"}}}
                    ]
                }
            },
        ),
    ),
    Mutation(
        "preferred-weight-zero",
        const(
            "spec.affinity",
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 0,
                            "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                        }
                    ]
                }
            },
        ),
    ),
    Mutation("priority-with-class", const("spec.priority", 10)),
    Mutation("unknown-field", const("spec.container", [])),
    *pod_spec_mutations("spec"),
]


# --- Dynamic Resource Allocation ----------------------------------------------------------------------------

SELECTORS: Final = st.sampled_from(
    [f'device.driver == "{DRIVER}"', f'device.attributes["{DRIVER}"].model == "a100"', "true"]
)


@st.composite
def opaque(draw: Draw) -> JSON:
    return {
        "driver": DRIVER,
        "parameters": {
            "apiVersion": "gpu.example.com/v1",
            "kind": "Config",
            "sharing": draw(st.sampled_from(["time-slicing", "mps"])),
        },
    }


@st.composite
def device_class(draw: Draw) -> JSON:
    spec: JSON = {"selectors": [{"cel": {"expression": draw(SELECTORS)}}]}
    if draw(st.booleans()):
        spec["config"] = [{"opaque": draw(opaque())}]
    return {
        "apiVersion": RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": draw(NAMES) + ".example.com"},
        "spec": spec,
    }


@st.composite
def claim_spec(draw: Draw) -> JSON:
    names = draw(st.lists(LABEL_NAMES, min_size=1, max_size=2, unique=True))
    requests = []
    for name in names:
        exactly: JSON = {"deviceClassName": "gpu.example.com"}
        if draw(st.booleans()):
            exactly["count"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            exactly["selectors"] = [{"cel": {"expression": draw(SELECTORS)}}]
        requests.append({"name": name, "exactly": exactly})
    devices: JSON = {"requests": requests}
    if draw(st.booleans()):
        devices["constraints"] = [{"requests": names, "matchAttribute": f"{DRIVER}/model"}]
    if draw(st.booleans()):
        devices["config"] = [{"requests": names[:1], "opaque": draw(opaque())}]
    return {"devices": devices}


@st.composite
def resource_claim(draw: Draw) -> JSON:
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaim",
        "metadata": {"name": draw(NAMES)},
        "spec": draw(claim_spec()),
    }


@st.composite
def resource_claim_template(draw: Draw) -> JSON:
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": draw(NAMES)},
        "spec": {"spec": draw(claim_spec())},
    }


def _opaque_in(path: str, parameters: Any = None, driver: Any = None) -> Callable[[JSON, Draw], None]:
    def apply(obj: JSON, draw: Draw) -> None:
        config: JSON = {
            "opaque": {"driver": DRIVER if driver is None else draw(driver), "parameters": {"a": 1}}
        }
        if parameters is not None:
            config["opaque"]["parameters"] = draw(parameters)
        if path.endswith("devices.config"):
            config["requests"] = [_get(obj, path.rsplit(".", 1)[0] + ".requests.0.name")]
        _set(obj, path, [config])

    return apply


BAD_PARAMETERS: Final = st.sampled_from(["a string", 3, ["a", "list"], None, {}])


def device_class_mutations() -> list[Mutation]:
    return [
        Mutation("opaque-driver-bad", _opaque_in("spec.config", driver=BAD_DRIVERS)),
        Mutation("opaque-parameters-bad", _opaque_in("spec.config", parameters=BAD_PARAMETERS)),
        Mutation("opaque-driver-missing", const("spec.config", [{"opaque": {"parameters": {"a": 1}}}])),
        Mutation("config-empty", const("spec.config", [{}])),
        Mutation(
            "selector-cel-bad",
            put(
                "spec.selectors.0.cel.expression",
                st.sampled_from(["device.", "1 +", "device.driver == 1", "device.nope"]),
            ),
            area="dra-cel",
        ),
        Mutation("selector-empty", const("spec.selectors", [{}])),
        # Dropped unread while the API server's DRAExtendedResource gate is off (its default in 1.34).
        Mutation("extended-resource-name-gated", const("spec.extendedResourceName", "Not Valid")),
        Mutation("unknown-field", const("spec.selector", [])),
    ]


def claim_mutations(at: str) -> list[Mutation]:
    d = f"{at}.devices"
    r0 = f"{d}.requests.0"
    return [
        Mutation("request-name-bad", put(f"{r0}.name", LABEL_ONLY_BAD)),
        Mutation(
            "request-name-duplicate",
            lambda o, dr: _get(o, f"{d}.requests").append(copy.deepcopy(_get(o, r0))),
        ),
        Mutation("request-count-zero", put(f"{r0}.exactly.count", st.integers(-2, 0))),
        Mutation("request-class-name-bad", put(f"{r0}.exactly.deviceClassName", BAD_NAMES)),
        Mutation("request-class-name-missing", drop(f"{r0}.exactly.deviceClassName")),
        Mutation("request-allocation-mode-bad", const(f"{r0}.exactly.allocationMode", "Some")),
        Mutation(
            "request-allocation-mode-all-with-count",
            lambda o, dr: _get(o, f"{r0}.exactly").update(allocationMode="All", count=2),
        ),
        Mutation("request-no-exactly", drop(f"{r0}.exactly")),
        Mutation(
            "requests-empty-with-constraint",
            const(f"{d}", {"requests": [], "constraints": [{"matchAttribute": f"{DRIVER}/model"}]}),
        ),
        Mutation(
            "match-attribute-bad",
            lambda o, dr: _set(o, f"{d}.constraints", [{"matchAttribute": dr(BAD_DOMAINS)}]),
        ),
        Mutation(
            "constraint-unknown-request",
            const(f"{d}.constraints", [{"requests": ["nonesuch"], "matchAttribute": f"{DRIVER}/model"}]),
        ),
        Mutation("opaque-driver-bad", _opaque_in(f"{d}.config", driver=BAD_DRIVERS)),
        Mutation("opaque-parameters-bad", _opaque_in(f"{d}.config", parameters=BAD_PARAMETERS)),
        Mutation(
            "opaque-driver-missing",
            lambda o, dr: _set(o, f"{d}.config", [{"opaque": {"parameters": {"a": 1}}}]),
        ),
        Mutation(
            "config-unknown-request",
            const(
                f"{d}.config",
                [{"requests": ["nonesuch"], "opaque": {"driver": DRIVER, "parameters": {"a": 1}}}],
            ),
        ),
        Mutation(
            "selector-cel-bad",
            put(
                f"{r0}.exactly.selectors",
                st.sampled_from(["device.", "1 +", "device.driver == 1"]).map(
                    lambda e: [{"cel": {"expression": e}}]
                ),
            ),
            area="dra-cel",
        ),
        Mutation("unknown-field", const(f"{d}.request", [])),
    ]


# --- the corpus ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    kind: str
    namespaced: bool
    valid: st.SearchStrategy[JSON]
    mutations: list[Mutation]


KINDS: Final[list[Kind]] = [
    Kind("Job", True, job(), name_mutations() + job_spec_mutations("spec")),
    Kind("JobTemplate", True, job_template(), name_mutations() + template_mutations("spec")),
    Kind("CronJob", True, cronjob(), name_mutations() + CRONJOB_MUTATIONS),
    Kind("JobFlow", True, jobflow(), name_mutations() + JOBFLOW_MUTATIONS),
    Kind("PodGroup", True, podgroup(), name_mutations() + PODGROUP_MUTATIONS),
    Kind("Queue", False, queue(), name_mutations() + QUEUE_MUTATIONS),
    Kind("Command", True, command(), name_mutations() + COMMAND_MUTATIONS),
    Kind("HyperNode", False, hypernode(), name_mutations() + HYPERNODE_MUTATIONS),
    Kind("Numatopology", False, numatopology(), name_mutations() + NUMATOPOLOGY_MUTATIONS),
    Kind("Pod", True, pod(), name_mutations() + POD_MUTATIONS),
    Kind("DeviceClass", False, device_class(), name_mutations() + device_class_mutations()),
    Kind("ResourceClaim", True, resource_claim(), name_mutations() + claim_mutations("spec")),
    Kind(
        "ResourceClaimTemplate",
        True,
        resource_claim_template(),
        name_mutations() + claim_mutations("spec.spec"),
    ),
]
VALID: Final = "valid"


def plan(kinds: Collection[str] | None = None) -> list[tuple[Kind, Mutation | None]]:
    """Every mutation of every kind (of ``kinds``, or all) once, and about one valid object for three mutated
    ones (None), kinds interleaved so that any prefix covers all of them."""
    per_kind: list[list[tuple[Kind, Mutation | None]]] = []
    for kind in KINDS:
        if kinds is not None and kind.kind not in kinds:
            continue
        mutations: list[Mutation | None] = list(kind.mutations)
        valid: list[Mutation | None] = [None] * max(3, len(mutations) // 3)
        # Valid ones spread through the mutated ones, not bunched at the end.
        step = max(1, len(mutations) // len(valid))
        entries = list(mutations)
        for n, none in enumerate(valid):
            entries.insert(n * (step + 1), none)
        per_kind.append([(kind, m) for m in entries])
    longest = max(len(entries) for entries in per_kind)
    return [entries[i] for i in range(longest) for entries in per_kind if i < len(entries)]


def build(kind: Kind, mutation: Mutation | None, draw: Draw) -> Case:
    obj = draw(kind.valid)
    if mutation is None:
        return Case(kind.kind, kind.namespaced, VALID, SAME, None, obj)
    mutation.apply(obj, draw)
    return Case(kind.kind, kind.namespaced, mutation.name, mutation.expect, mutation.area, obj)


def _drawn(kind: Kind, mutation: Mutation | None, seed: int) -> Case:
    drawn: list[Case] = []

    # Two examples, the second kept: Hypothesis starts with the simplest object, which would make every
    # case of a kind the same.
    @hypothesis.seed(seed)
    @settings(
        max_examples=2,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        drawn.append(build(kind, mutation, data.draw))

    collect()
    return drawn[-1]


def sample(count: int | None = None, *, seed: int = 0, kinds: Collection[str] | None = None) -> list[Case]:
    """Cases along ``plan(kinds)`` (``count`` of them, cycling; None: the plan once), the same ones for the
    same ``seed`` on every run."""
    entries = plan(kinds)
    total = len(entries) if count is None else count
    return [_drawn(*entries[i % len(entries)], seed=seed * 1_000_003 + i) for i in range(total)]
