"""Every Volcano enum is defined once, in ``volcano_py.api``; controllers and scheduler use those enums."""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
from types import ModuleType

import volcano_py
from volcano_py.api import batch, bus, scheduling
from volcano_py.controllers.job import plan, policies, state
from volcano_py.controllers.queue import state as queue_state
from volcano_py.scheduler.framework import decisions, status


def _all_modules() -> list[ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(volcano_py.__path__, prefix="volcano_py.")
        if not info.name.endswith("__main__")
    ]


def _api_enums() -> dict[frozenset[str], type[enum.Enum]]:
    out: dict[frozenset[str], type[enum.Enum]] = {}
    for module in _all_modules():
        if not module.__name__.startswith("volcano_py.api."):
            continue
        for _, klass in inspect.getmembers(module, inspect.isclass):
            if issubclass(klass, enum.Enum) and klass.__module__ == module.__name__:
                out[frozenset(str(m.value) for m in klass)] = klass
    return out


def test_controllers_and_scheduler_phases_are_the_api_enums() -> None:
    assert state.JobPhase is batch.JobPhase
    assert policies.Action is bus.Action and policies.Event is bus.Event
    assert queue_state.QueueState is scheduling.QueueState
    assert status.PodGroupPhase is scheduling.PodGroupPhase
    assert decisions.PodGroupPhase is scheduling.PodGroupPhase
    assert all(type(p) is scheduling.PodGroupPhase for p in plan.ADMITTED_PODGROUP_PHASES)


def test_the_job_kinds_are_defined_only_in_the_api() -> None:
    kinds = ("JobSpec", "TaskSpec", "JobStatus", "LifecyclePolicy", "DependsOn", "VolumeSpec")
    outside = [
        f"{klass.__module__}.{name}"
        for module in _all_modules()
        if not module.__name__.startswith("volcano_py.api.")
        for name, klass in inspect.getmembers(module, inspect.isclass)
        if name in kinds and klass.__module__ == module.__name__
    ]
    assert outside == []


def test_no_enum_outside_api_repeats_an_api_enum() -> None:
    api_enums = _api_enums()
    copies = []
    for module in _all_modules():
        if module.__name__.startswith("volcano_py.api."):
            continue
        for name, klass in inspect.getmembers(module, inspect.isclass):
            if not issubclass(klass, enum.Enum) or klass.__module__ != module.__name__:
                continue
            values = frozenset(str(m.value) for m in klass)
            # The same values, or most of an api enum's values: a copy that has drifted.
            for api_values, api_enum in api_enums.items():
                if len(values & api_values) >= max(2, len(api_values) - 1):
                    copies.append(
                        f"{module.__name__}.{name} copies {api_enum.__module__}.{api_enum.__name__}"
                    )
    assert copies == []
