"""Confs for ``volcano-py validate``: a ``volcano-scheduler.conf`` file, or a ConfigMap holding one (any
``data`` key ending in ``.conf``), checked by the scheduler's own loader, so the messages are those the
scheduler would log at load before refusing the conf; and a ``volcano-admission.conf`` (a file whose top key
is ``resourceGroups``, or the ConfigMap key of that name), checked by the --admission-conf loader."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.admission_conf import (
    ADMISSION_CONF_KEY,
    RESOURCE_GROUPS_FIELD,
    AdmissionConfError,
    load_admission_conf,
)
from volcano_py.scheduler.core import ConfError, load_conf

CONF_SUFFIX = ".conf"


def is_scheduler_conf(doc: Any) -> bool:
    """A bare conf document: a mapping with ``actions`` (and usually ``tiers``), no ``kind``."""
    return isinstance(doc, Mapping) and "kind" not in doc and "actions" in doc


def is_admission_conf(doc: Any) -> bool:
    """A bare volcano-admission.conf document: a mapping with ``resourceGroups``, no ``kind``."""
    return isinstance(doc, Mapping) and "kind" not in doc and RESOURCE_GROUPS_FIELD in doc


def held_confs(doc: Any) -> dict[str, str]:
    """The scheduler confs a ConfigMap holds, by data key; empty for anything else."""
    if not isinstance(doc, Mapping) or doc.get("kind") != "ConfigMap":
        return {}
    data = doc.get("data") or {}
    if not isinstance(data, Mapping):
        return {}
    return {str(key): value for key, value in data.items() if str(key).endswith(CONF_SUFFIX)}


def conf_problem(text: Any, key: str = "") -> str | None:
    """Why the scheduler (or, for the ConfigMap key ``volcano-admission.conf``, the pod mutating webhook)
    would refuse this conf text at load, or None when it loads."""
    if not isinstance(text, str):
        return f"must be the conf as a string (a YAML block such as |), got {type(text).__name__}"
    try:
        if key == ADMISSION_CONF_KEY:
            load_admission_conf(text)
        else:
            load_conf(text)
    except (ConfError, AdmissionConfError) as err:
        return str(err)
    return None
