"""Pod mutation by resource group (``volcano-admission.conf``): which group a new pod belongs to, and the
patch that sends it to the group's nodes and scheduler.

As in Volcano, the groups are tried in the conf's order and the first that takes the pod wins; the pod then
gets the group's ``labels`` merged into its nodeSelector (the group's value wins on a shared key), its
``affinity`` unless the pod has one, its ``tolerations`` after the pod's own, and its ``schedulerName``.
A pod no group takes, or any pod when no conf is given, is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.admission_conf import AdmissionConf, ObjectKey, ResourceGroup
from volcano_py.api.objects import annotations_of, spec_of
from volcano_py.webhooks.patch import PatchOp, pointer


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def belongs(pod: Mapping[str, Any], namespace: str, group: ResourceGroup) -> bool:
    """Whether ``group`` takes ``pod`` (created in ``namespace``)."""
    if group.object.key is ObjectKey.NAMESPACE:
        return namespace in group.object.value
    annotations = annotations_of(pod)
    if any(annotations.get(key) == value for key, value in group.annotations.items()):
        return True
    return (
        group.by_default_annotation()
        and annotations.get(constants.RESOURCE_GROUP_ANNOTATION_KEY) == group.resource_group
    )


def resource_group_of(
    pod: Mapping[str, Any], namespace: str, conf: AdmissionConf | None
) -> ResourceGroup | None:
    """The first group of ``conf`` that takes the pod, or None."""
    if conf is None:
        return None
    return next((group for group in conf.resource_groups if belongs(pod, namespace, group)), None)


def mutate_pod(pod: Mapping[str, Any], namespace: str, conf: AdmissionConf | None) -> list[PatchOp]:
    """The JSON patch a pod gets at create from its resource group; empty when it has none."""
    group = resource_group_of(pod, namespace, conf)
    if group is None:
        return []
    spec = spec_of(pod)
    ops: list[PatchOp] = []
    if group.labels:
        selector = {**_mapping(spec.get("nodeSelector")), **group.labels}
        ops.append(PatchOp("add", pointer("spec", "nodeSelector"), selector))
    if group.affinity_object is not None and spec.get("affinity") is None:
        ops.append(PatchOp("add", pointer("spec", "affinity"), group.affinity_object))
    if group.tolerations:
        own = spec.get("tolerations")
        ops.append(
            PatchOp(
                "add",
                pointer("spec", "tolerations"),
                [*(own if isinstance(own, list) else []), *group.tolerations],
            )
        )
    if group.scheduler_name:
        ops.append(PatchOp("add", pointer("spec", "schedulerName"), group.scheduler_name))
    return ops
