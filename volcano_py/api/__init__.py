"""Volcano's API types as pydantic models, and the well-known names (``constants``) everyone shares.

``volcano_py.api`` is the bottom layer: it imports nothing else from the package except ``resources`` and
does no I/O, so the scheduler core, the controllers, the webhooks and the CLI can all depend on it.

Read an object with ``Job.model_validate(obj)``, write one with ``.to_dict()`` (camelCase, only the fields
that were set); check one with ``validation.validate_object(obj)`` (a list of ``Problem``).
"""

from volcano_py.api import constants
from volcano_py.api.batch import Job, JobPhase, LifecyclePolicy, TaskSpec
from volcano_py.api.bus import Action, Command, Event
from volcano_py.api.cron import ConcurrencyPolicy, CronJob
from volcano_py.api.flow import FlowPhase, JobFlow, JobTemplate, RetainPolicy
from volcano_py.api.nodeinfo import Numatopology
from volcano_py.api.problems import Problem
from volcano_py.api.scheduling import PodGroup, PodGroupPhase, Queue, QueueState
from volcano_py.api.topology import HyperNode

__all__ = [
    "Action",
    "Command",
    "ConcurrencyPolicy",
    "CronJob",
    "Event",
    "FlowPhase",
    "HyperNode",
    "Job",
    "JobFlow",
    "JobPhase",
    "JobTemplate",
    "LifecyclePolicy",
    "Numatopology",
    "PodGroup",
    "PodGroupPhase",
    "Problem",
    "Queue",
    "QueueState",
    "RetainPolicy",
    "TaskSpec",
    "constants",
]
