"""Pod admission: Volcano's rules for the job disruption budget annotations on pods it schedules.

Pods of other schedulers pass untouched, as in Volcano; the webhook configuration's matchConditions keep
them (and pods without the annotations) from reaching us at all, so an admission outage never blocks them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.bodies.pod import pod_scheduler_name
from volcano_py.api.jdb import check_jdb_annotations
from volcano_py.api.objects import annotations_of
from volcano_py.api.problems import Problem


def validate_pod_create(
    pod: Mapping[str, Any], scheduler_names: Collection[str] = (constants.SCHEDULER_NAME,)
) -> list[Problem]:
    # The API server decoded the pod before admission: its spec and metadata have their types.
    if pod_scheduler_name(pod) not in scheduler_names:
        return []
    return check_jdb_annotations(annotations_of(pod))
