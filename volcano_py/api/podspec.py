"""The parts of a Kubernetes pod spec that we read, checked and summed, without modelling the whole PodSpec.

Pod templates stay plain mappings (the API server validates the rest when it creates the pods); what the
scheduler and the Job controller rely on -- containers and their resources, nodeSelector, affinity,
tolerations, priorityClassName, schedulerName -- is checked here so a mistake shows up at ``validate`` or
admission time, with the field named, instead of as a pod that never schedules.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.common import dns1123_label_problem, dns1123_subdomain_problem
from volcano_py.api.containers import check_container
from volcano_py.api.pod_placement import placement_problems
from volcano_py.api.problems import Problem, join_path
from volcano_py.resources import GPU, QuantityError, parse_quantity

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")


class PodPhase(StrEnum):
    """corev1.PodPhase."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


def pod_phase(pod: Mapping[str, Any]) -> PodPhase:
    """A pod's ``status.phase``: Pending until the API server writes one; a value Kubernetes does not define
    reads as Unknown."""
    # A dict lookup, not PodPhase(raw): read for every pod of every snapshot.
    return _POD_PHASES.get((pod.get("status") or {}).get("phase") or "Pending", PodPhase.UNKNOWN)


_POD_PHASES: Final[Mapping[Any, PodPhase]] = {phase.value: phase for phase in PodPhase}


TOLERATION_OPERATORS: Final = ("Exists", "Equal")
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
AFFINITY_KINDS: Final = ("nodeAffinity", "podAffinity", "podAntiAffinity")
# core/v1 PodSpec's fields (k8s.io/api v0.34). Volcano's Job CRD carries the full PodTemplateSpec schema, so
# ``kubectl apply`` (strict field validation) refuses any other key; our CRD keeps templates open, so we do.
POD_SPEC_FIELDS: Final = (
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
    "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
    "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
    "resources", "hostnameOverride",
)  # fmt: skip


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def check_pod_spec(spec: Any, path: str, *, require_containers: bool = True) -> list[Problem]:
    """Problems in the parts of ``spec`` (a PodSpec mapping at ``path``) we read."""
    if not isinstance(spec, Mapping):
        return [
            Problem(path, f"expected a mapping (the pod spec), got {_kind(spec)} (write 'containers: ...')")
        ]
    problems: list[Problem] = []
    for key in spec:
        if key in POD_SPEC_FIELDS:
            continue
        close = difflib.get_close_matches(str(key), POD_SPEC_FIELDS, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "not a field of a Kubernetes pod spec"
        problems.append(
            Problem(join_path(path, str(key)), f"unknown field (remove it or fix the spelling; {hint})")
        )
    containers = spec.get("containers")
    if (containers is None or containers == []) and require_containers:
        problems.append(Problem(join_path(path, "containers"), "is required (add at least one container)"))
    volumes, volume_problems = _check_volumes(spec.get("volumes"), join_path(path, "volumes"))
    problems += volume_problems
    names: set[str] = set()
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        if containers is None:
            continue
        if not isinstance(containers, list):
            problems.append(
                Problem(
                    join_path(path, field),
                    f"expected a list of containers, got {_kind(containers)} (write '- name: ...')",
                )
            )
            continue
        for i, container in enumerate(containers):
            problems += check_container(
                container, join_path(path, field, i), names, volumes, init=field == "initContainers"
            )
    problems += _check_gpu_kinds(spec, path)
    restart = spec.get("restartPolicy")
    # Empty is unset: the API server (and Volcano's Job admission, which defaults templates first) makes it
    # Always.
    if restart is not None and restart != "" and restart not in RESTART_POLICIES:
        problems.append(
            Problem(
                join_path(path, "restartPolicy"),
                f"{restart!r} is not allowed (use one of {', '.join(RESTART_POLICIES)})",
            )
        )
    problems += _check_string_map(spec.get("nodeSelector"), join_path(path, "nodeSelector"))
    problems += check_tolerations(spec.get("tolerations"), join_path(path, "tolerations"))
    problems += check_affinity(spec.get("affinity"), join_path(path, "affinity"))
    problems += placement_problems(spec, path)
    for field in ("priorityClassName", "schedulerName"):
        value = spec.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            problems.append(
                Problem(join_path(path, field), f"expected a string, got {_kind(value)} (quote it)")
            )
        elif field == "priorityClassName" and value and (msg := dns1123_subdomain_problem(value)):
            problems.append(Problem(join_path(path, field), msg))
    return problems


def check_pod_priority(spec: Mapping[str, Any], path: str) -> list[Problem]:
    """A pod's ``priority`` is the API server's to set, from its PriorityClass: a pod that writes one refuses
    unless it is that value. Without a class the value is 0 (a cluster-wide default class aside), so any
    other number is refused; with a class the value is unknown offline and is left to the server."""
    priority = spec.get("priority")
    if priority is None or spec.get("priorityClassName") or priority == 0:
        return []
    return [
        Problem(
            join_path(path, "priority"),
            f"{priority!r} may not be set: the API server computes priority from priorityClassName "
            "(remove priority and name a PriorityClass instead)",
        )
    ]


VOLUME_SOURCES: Final = (
    "emptyDir",
    "hostPath",
    "configMap",
    "secret",
    "persistentVolumeClaim",
    "projected",
    "downwardAPI",
    "ephemeral",
    "csi",
    "nfs",
    "image",
    "iscsi",
    "fc",
    "rbd",
    "cephfs",
    "cinder",
    "glusterfs",
    "flexVolume",
    "flocker",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)
# The one field each common volume source cannot do without.
_SOURCE_REQUIRED: Final = {
    "configMap": "name",
    "secret": "secretName",
    "persistentVolumeClaim": "claimName",
    "hostPath": "path",
    "nfs": "path",
}


def _check_volumes(volumes: Any, path: str) -> tuple[set[str] | None, list[Problem]]:
    """The pod's volume names (None when ``volumes`` is not a list) and the problems in them."""
    if volumes is None:
        return set(), []
    if not isinstance(volumes, list):
        return None, [
            Problem(path, f"expected a list of volumes, got {_kind(volumes)} (write '- name: data')")
        ]
    names: set[str] = set()
    problems: list[Problem] = []
    for i, volume in enumerate(volumes):
        here = join_path(path, i)
        if not isinstance(volume, Mapping):
            problems.append(Problem(here, f"expected a mapping (a volume), got {_kind(volume)}"))
            continue
        name = volume.get("name")
        if not isinstance(name, str) or not name:
            problems.append(Problem(join_path(here, "name"), "is required (name the volume)"))
        elif msg := dns1123_label_problem(name):
            problems.append(Problem(join_path(here, "name"), msg))
        elif name in names:
            problems.append(
                Problem(join_path(here, "name"), f"duplicated volume name {name!r} (name each once)")
            )
        if isinstance(name, str) and name:
            names.add(name)  # mounts of a misnamed volume are not reported twice
        sources = [key for key in volume if key in VOLUME_SOURCES]
        unknown = [str(key) for key in volume if key != "name" and key not in VOLUME_SOURCES]
        for key in unknown:
            close = difflib.get_close_matches(key, VOLUME_SOURCES, n=1)
            hint = (
                f"did you mean {close[0]!r}?" if close else "e.g. emptyDir, configMap, persistentVolumeClaim"
            )
            problems.append(Problem(join_path(here, key), f"unknown volume type ({hint})"))
        if not sources and not unknown:
            problems.append(
                Problem(
                    here, "has no volume type (add one, e.g. 'emptyDir: {}' or 'persistentVolumeClaim: ...')"
                )
            )
        elif len(sources) > 1:
            problems.append(Problem(here, f"sets {' and '.join(sources)} (a volume has exactly one type)"))
        for source in sources:
            body, required = volume[source], _SOURCE_REQUIRED.get(source)
            if body is not None and not isinstance(body, Mapping):
                problems.append(Problem(join_path(here, source), f"expected a mapping, got {_kind(body)}"))
            elif required and not (body or {}).get(required):
                problems.append(
                    Problem(join_path(here, source, required), f"is required for a {source} volume")
                )
    return names, problems


_WHOLE_GPUS = (GPU, constants.GPU_NUMBER_RESOURCE)
_SHARED_GPUS = (
    constants.GPU_MEMORY_RESOURCE,
    constants.VGPU_NUMBER_RESOURCE,
    constants.VGPU_MEMORY_RESOURCE,
    constants.VGPU_MEMORY_PERCENTAGE_RESOURCE,
    constants.VGPU_CORES_RESOURCE,
)
_PERCENTAGES = (constants.VGPU_MEMORY_PERCENTAGE_RESOURCE, constants.VGPU_CORES_RESOURCE)


def _gpu_asks(spec: Mapping[str, Any], path: str) -> list[tuple[str, str, Any]]:
    """(resource name, field path, value) of every GPU resource a container asks for."""
    asks: list[tuple[str, str, Any]] = []
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            resources = container.get("resources") if isinstance(container, Mapping) else None
            if not isinstance(resources, Mapping):
                continue
            for part in ("limits", "requests"):
                values = resources.get(part)
                if not isinstance(values, Mapping):
                    continue
                for name, value in values.items():
                    if name in _WHOLE_GPUS or name in _SHARED_GPUS:
                        where = join_path(path, field, i, "resources", part, str(name))
                        asks.append((str(name), where, value))
    return asks


def _check_gpu_kinds(spec: Mapping[str, Any], path: str) -> list[Problem]:
    """A pod gets whole GPUs or a share of one, from one device plugin: mixing them cannot be placed."""
    asks = _gpu_asks(spec, path)
    problems: list[Problem] = []
    whole = next(((n, p) for n, p, _ in asks if n in _WHOLE_GPUS), None)
    shared = next(((n, p) for n, p, _ in asks if n in _SHARED_GPUS), None)
    if whole and shared:
        problems.append(
            Problem(
                shared[1],
                f"asks for a shared GPU while {whole[1]} asks for whole GPUs ({whole[0]}); "
                "a pod gets either whole GPUs or a share of one (drop one of them)",
            )
        )
    share_memory = next((p for n, p, _ in asks if n == constants.GPU_MEMORY_RESOURCE), None)
    vgpu = next((p for n, p, _ in asks if n.startswith("volcano.sh/vgpu-")), None)
    if share_memory and vgpu:
        problems.append(
            Problem(
                vgpu,
                f"asks for a vGPU while {share_memory} asks for gpushare memory; a node runs one of the two "
                "device plugins (use volcano.sh/vgpu-* or volcano.sh/gpu-memory, not both)",
            )
        )
    for name, where, value in asks:
        if name not in _PERCENTAGES:
            continue
        try:
            amount = parse_quantity(value)
        except QuantityError:
            continue  # reported by the resources check
        if amount > 100:
            problems.append(Problem(where, f"{value!r} is a percentage of one GPU (use at most 100)"))
    return problems


def _check_string_map(value: Any, path: str) -> list[Problem]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [Problem(path, f"expected a mapping of label: value, got {_kind(value)}")]
    return [
        Problem(join_path(path, str(key)), f"{item!r} is not a string (quote it: '{item}')")
        for key, item in value.items()
        if not isinstance(item, str)
    ]


def check_tolerations(tolerations: Any, path: str) -> list[Problem]:
    if tolerations is None:
        return []
    if not isinstance(tolerations, list):
        return [Problem(path, f"expected a list of tolerations, got {_kind(tolerations)}")]
    problems: list[Problem] = []
    for i, tol in enumerate(tolerations):
        here = join_path(path, i)
        if not isinstance(tol, Mapping):
            problems.append(Problem(here, f"expected a mapping (a toleration), got {_kind(tol)}"))
            continue
        operator = tol.get("operator", "Equal")
        if operator not in TOLERATION_OPERATORS:
            problems.append(
                Problem(join_path(here, "operator"), f"{operator!r} is not allowed (use Exists or Equal)")
            )
        if operator == "Exists" and tol.get("value"):
            # Named at the operator, as the API server names it: either one is the mistake.
            problems.append(
                Problem(
                    join_path(here, "operator"),
                    f"Exists takes no value, got value {tol['value']!r} "
                    "(remove value, or use operator Equal)",
                )
            )
        if not tol.get("key") and operator != "Exists":
            problems.append(
                Problem(join_path(here, "operator"), "must be Exists when key is empty (set a key)")
            )
        effect = tol.get("effect")
        if effect and effect not in TAINT_EFFECTS:
            problems.append(
                Problem(
                    join_path(here, "effect"),
                    f"{effect!r} is not allowed (use one of {', '.join(TAINT_EFFECTS)})",
                )
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            problems.append(
                Problem(
                    join_path(here, "tolerationSeconds"),
                    "only applies to effect NoExecute (set effect: NoExecute)",
                )
            )
    return problems


def check_affinity(affinity: Any, path: str) -> list[Problem]:
    if affinity is None:
        return []
    if not isinstance(affinity, Mapping):
        return [Problem(path, f"expected a mapping, got {_kind(affinity)}")]
    problems = [
        Problem(join_path(path, str(key)), f"unknown affinity kind (use one of {', '.join(AFFINITY_KINDS)})")
        for key in affinity
        if key not in AFFINITY_KINDS
    ]
    node = affinity.get("nodeAffinity")
    if isinstance(node, Mapping):
        required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, Mapping):
            terms_path = join_path(
                path, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"
            )
            terms = required.get("nodeSelectorTerms")
            if not isinstance(terms, list) or not terms:
                problems.append(Problem(terms_path, "is required (add at least one node selector term)"))
            else:
                for i, term in enumerate(terms):
                    problems += _check_node_term(term, join_path(terms_path, i))
        for i, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            here = join_path(path, "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i)
            if isinstance(pref, Mapping):
                problems += _check_node_term(pref.get("preference"), join_path(here, "preference"))
    return problems


def _check_node_term(term: Any, path: str) -> list[Problem]:
    if not isinstance(term, Mapping):
        return [Problem(path, f"expected a mapping with matchExpressions, got {_kind(term)}")]
    problems: list[Problem] = []
    for field in ("matchExpressions", "matchFields"):
        for i, req in enumerate(term.get(field) or []):
            here = join_path(path, field, i)
            if not isinstance(req, Mapping):
                problems.append(Problem(here, "expected a mapping with key, operator and values"))
                continue
            operator = req.get("operator")
            values = req.get("values") or []
            if operator not in NODE_SELECTOR_OPERATORS:
                problems.append(
                    Problem(
                        join_path(here, "operator"),
                        f"{operator!r} is not allowed (use one of {', '.join(NODE_SELECTOR_OPERATORS)})",
                    )
                )
            elif operator in ("In", "NotIn") and not values:
                problems.append(
                    Problem(
                        join_path(here, "values"), f"must not be empty for operator {operator} (add values)"
                    )
                )
            elif operator in ("Exists", "DoesNotExist") and values:
                problems.append(
                    Problem(
                        join_path(here, "values"), f"must be empty for operator {operator} (remove values)"
                    )
                )
            elif operator in ("Gt", "Lt") and (len(values) != 1 or not str(values[0]).lstrip("-").isdigit()):
                problems.append(
                    Problem(
                        join_path(here, "values"),
                        f"operator {operator} needs exactly one integer value (e.g. ['4'])",
                    )
                )
    return problems
