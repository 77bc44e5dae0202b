"""Admission rules for JobFlow, JobTemplate and CronJob that need nothing but the object itself.

A JobFlow must be a DAG over its own steps (Volcano's webhook refuses a cycle or a target that is not a step);
its JobTemplates need not exist yet (the flow controller waits for them), so only a set of files checked
together reports a step whose template none of them defines (``missing_templates``). A CronJob's schedule
and time zone must parse, and its name leave room for the ``-<minutes since epoch>`` suffix of its Jobs.
"""

from __future__ import annotations

from collections.abc import Collection

from volcano_py.api import constants
from volcano_py.api.batch import Job, JobSpec
from volcano_py.api.cron import CronJob
from volcano_py.api.cron_parse import load_zone, parse_schedule
from volcano_py.api.cron_schedule import ScheduleError
from volcano_py.api.flow import JobFlow, JobTemplate
from volcano_py.api.job_rules import validate_job
from volcano_py.api.messages import (
    VOLCANO_CRON_NAME_TOO_LONG,
    VOLCANO_FLOW_NOT_DAG,
    VOLCANO_FLOW_VERTEX_NOT_DEFINED,
    volcano_said,
)
from volcano_py.api.meta import ObjectMeta
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.rules import object_name_problems

# Volcano names a Job after the flow and the step: "<flow>-<step>", and a Job name fits in 63 characters.
MAX_JOB_NAME = 63
# A CronJob's Jobs are "<cronjob>-<minutes since the epoch>": 52 + 1 + up to 10 digits.
MAX_CRONJOB_NAME = 52


def flow_job_name(flow_name: str, step: str) -> str:
    """The name of the Job a JobFlow creates for one step (Volcano's)."""
    return f"{flow_name}-{step}"


def _job_spec_problems(spec: JobSpec, prefix: str) -> list[Problem]:
    """The Job admission rules on a spec that is not yet a Job, with paths under ``prefix``."""
    job = Job(metadata=ObjectMeta(name="template"), spec=spec)
    out: list[Problem] = []
    for problem in validate_job(job):
        if problem.path.startswith("metadata"):
            continue
        path = problem.path.removeprefix("spec")
        out.append(Problem(f"{prefix}{path}", problem.message))
    return out


def validate_jobtemplate(template: JobTemplate) -> list[Problem]:
    return object_name_problems(template.metadata) + _job_spec_problems(template.spec, "spec")


def deferred_job_rules(obj: JobTemplate | CronJob) -> list[Problem]:
    """The Job rules ``validate_object`` applies to a JobTemplate's or CronJob's Job spec, which Volcano's
    admission does not: it checks them when the Job is created (the CronJob or JobFlow then reports the
    refusal), so admission leaves them to that moment and ``volcano-py validate`` still reports them."""
    if isinstance(obj, CronJob):
        return _job_spec_problems(obj.spec.job_template.spec, "spec.jobTemplate.spec")
    return _job_spec_problems(obj.spec, "spec")


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """One dependency cycle as a path (first == last), or None when ``edges`` is a DAG."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in edges:
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def flow_graph(flow: JobFlow) -> dict[str, list[str]]:
    """Each step name's targets, as Volcano reads the flow: a name listed twice is one step, and the last
    entry of that name gives its targets (Volcano's webhook builds a map by name)."""
    return {step.name: step.targets() for step in flow.spec.flows}


def validate_jobflow(flow: JobFlow) -> list[Problem]:
    """The flow must be a DAG over its own steps, as Volcano's webhook checks. An empty ``flows`` and a step
    name listed twice are admitted as Volcano admits them; whether the JobTemplates exist is the flow
    controller's to wait for, not admission's."""
    problems = object_name_problems(flow.metadata)
    graph = flow_graph(flow)
    last = {step.name: i for i, step in enumerate(flow.spec.flows)}
    edges: dict[str, list[str]] = {}
    known = ", ".join(sorted(graph))
    for name, targets in graph.items():
        edges[name] = [t for t in targets if t in graph]
        for j, target in enumerate(targets):
            if target not in graph:
                problems.append(
                    Problem(
                        join_path("spec", "flows", last[name], "dependsOn", "targets", j),
                        volcano_said(
                            VOLCANO_FLOW_VERTEX_NOT_DEFINED.format(vertex=target),
                            f"{target!r} is not a step of this flow (name one of: {known})",
                        ),
                    )
                )
    cycle = find_cycle(edges)
    if cycle is not None:
        problems.append(
            Problem(
                join_path("spec", "flows", last[cycle[0]], "dependsOn", "targets"),
                volcano_said(
                    VOLCANO_FLOW_NOT_DAG,
                    f"{' -> '.join(cycle)} depend on each other in a cycle "
                    "(remove one of these dependencies)",
                ),
            )
        )
    return problems


def missing_templates(flow: JobFlow, known: Collection[str]) -> list[Problem]:
    """Steps whose JobTemplate (same namespace, same name) is not among ``known``: the flow would wait."""
    return [
        Problem(
            join_path("spec", "flows", i, "name"),
            f"no JobTemplate {step.name!r} among these files (the flow waits until one of that name exists "
            f"in namespace {flow.namespace or 'default'}; add it, or fix the name)",
        )
        for i, step in enumerate(flow.spec.flows)
        if step.name not in known
    ]


def validate_cronjob(cronjob: CronJob) -> list[Problem]:
    problems = object_name_problems(cronjob.metadata)
    name = cronjob.metadata.name or ""
    if len(name) > MAX_CRONJOB_NAME:
        problems.append(
            Problem(
                "metadata.name",
                volcano_said(
                    VOLCANO_CRON_NAME_TOO_LONG.format(max_base=MAX_CRONJOB_NAME, max_total=MAX_JOB_NAME),
                    f"{name!r} has {len(name)} (shorten it: its Jobs add a '-<minutes>' suffix)",
                ),
            )
        )
    spec = cronjob.spec
    zone_ok = True
    try:
        load_zone(spec.time_zone)
    except ScheduleError as err:
        zone_ok = False
        problems.append(Problem("spec.timeZone", str(err)))
    try:
        parse_schedule(spec.schedule, spec.time_zone if zone_ok else None, must_fire=False)
    except ScheduleError as err:
        problems.append(Problem("spec.schedule", str(err)))
    problems += _job_spec_problems(spec.job_template.spec, "spec.jobTemplate.spec")
    return problems


def templates_missing_across(objects: Collection[object]) -> list[tuple[object, Problem]]:
    """For a set of manifests checked together: each JobFlow step whose JobTemplate none of them defines.

        Only when the set defines JobTemplates at all: a flow checked alone may well use templates that are
        already in the cluster. Admission takes such a flow (as Volcano does) and it waits for its templates;
    checked offline, a name no file defines is most often a typo.
    """
    templates: set[tuple[str, str]] = set()
    flows: list[tuple[object, JobFlow]] = []
    for obj in objects:
        if not isinstance(obj, dict) or obj.get("apiVersion") != constants.FLOW_API_VERSION:
            continue
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        namespace = str((meta or {}).get("namespace") or "")
        if obj.get("kind") == constants.JOBTEMPLATE_KIND:
            templates.add((namespace, str((meta or {}).get("name") or "")))
        elif obj.get("kind") == constants.JOBFLOW_KIND:
            try:
                flows.append((obj, JobFlow.model_validate(obj)))
            except ValueError:
                continue  # its own problems are reported by validate_object
    if not templates:
        return []
    out: list[tuple[object, Problem]] = []
    for obj, flow in flows:
        # A manifest without a namespace lands in whatever namespace it is applied to: it matches any.
        known = {name for ns, name in templates if not ns or not flow.namespace or ns == flow.namespace}
        out += [(obj, problem) for problem in missing_templates(flow, known)]
    return out
