"""Pod admission: Volcano's rules for the job disruption budget annotations on pods it schedules.

Pods of other schedulers pass untouched, as in Volcano; the webhook configuration's matchConditions keep
them (and pods without the annotations) from reaching us at all, so an admission outage never blocks them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.jdb import check_jdb_annotations
from volcano_py.api.problems import Problem


def validate_pod_create(
    pod: Mapping[str, Any], scheduler_names: Collection[str] = (constants.SCHEDULER_NAME,)
) -> list[Problem]:
    spec = pod.get("spec")
    if not isinstance(spec, Mapping) or spec.get("schedulerName") not in scheduler_names:
        return []
    metadata = pod.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return check_jdb_annotations(annotations) if isinstance(annotations, Mapping) else []
