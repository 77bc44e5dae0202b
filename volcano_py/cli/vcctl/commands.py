"""vcctl's verbs: read flags, talk to the API server once or twice, print what Volcano's vcctl prints."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api import constants as c
from volcano_py.api.bodies.job import job_queue, job_scheduler_name
from volcano_py.api.objects import name_of, namespace_of, owner_references_of, uid_of
from volcano_py.cli.vcctl import objects, views
from volcano_py.dashboard import inputs
from volcano_py.forecast import Bounds, job_section
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import COMMANDS, EVENTS, JOBS, PODGROUPS, PODS, QUEUES
from volcano_py.scheduler.core import ConfError
from volcano_py.whatif import Budget
from volcano_py.whatif.why import what_would_make_it_run

JSON = dict[str, Any]
# Volcano's vcctl puts queue Commands in this namespace, since a Queue has none of its own.
QUEUE_COMMAND_NAMESPACE = "default"


class CommandError(RuntimeError):
    """An API answer vcctl reports to the user and exits 1 on."""


async def _client(args: argparse.Namespace) -> KubeClient:
    # main() has already dropped a kubeconfig path that does not exist, so in-cluster config can apply.
    api_client = await load_api_client(args.kubeconfig or None)
    if args.master:
        api_client.configuration.host = args.master
    return KubeClient(api_client)


def _require(value: str, flag: str, what: str) -> str:
    if not value:
        raise objects.UsageError(f"{flag}: the name of the {what} must be specified; pass {flag} NAME")
    return value


async def _call(coro: Awaitable[JSON], what: str) -> JSON:
    try:
        return await coro
    except ApiError as err:
        if err.not_found:
            raise CommandError(f"{what} not found") from None
        raise CommandError(f"{what}: {err.message or err}") from None


def _now() -> datetime:
    return datetime.now(UTC)


async def _events_for(client: KubeClient, namespace: str, kind: str, name: str) -> list[JSON]:
    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    answer = await client.get(EVENTS.collection_path(namespace), fieldSelector=selector)
    items: list[JSON] = answer.get("items", [])
    return items


# --- job -----------------------------------------------------------------------------------------------


def _read_job_file(filename: str) -> JSON:
    if not filename.endswith((".yaml", ".yml")):
        raise objects.UsageError(f"--filename: only YAML files are supported, got {filename!r}")
    try:
        job = yaml.safe_load(Path(filename).read_text())
    except OSError as err:
        raise objects.UsageError(f"--filename: cannot read {filename}: {err.strerror}") from None
    if not isinstance(job, dict) or job.get("kind") != c.JOB_KIND:
        raise objects.UsageError(f"--filename: {filename} does not hold a {c.BATCH_API_VERSION} Job")
    return job


async def job_run(args: argparse.Namespace) -> int:
    if args.filename:
        job = _read_job_file(args.filename)
        meta = job.setdefault("metadata", {})
        if args.name:
            meta["name"] = args.name
        namespace = meta.setdefault("namespace", args.namespace)
    else:
        job = objects.job_from_flags(
            name=args.name,
            namespace=args.namespace,
            image=args.image,
            min_available=args.min,
            replicas=args.replicas,
            requests=objects.parse_resource_list(args.requests, flag="--requests"),
            limits=objects.parse_resource_list(args.limits, flag="--limits"),
            scheduler=args.scheduler,
            queue=args.queue or None,
        )
        namespace = args.namespace
    client = await _client(args)
    try:
        created = await _call(client.create(JOBS.collection_path(namespace), job), "create job")
    finally:
        await client.close()
    print(f"run job {name_of(created)} successfully")
    return 0


async def job_list(args: argparse.Namespace) -> int:
    client = await _client(args)
    try:
        answer = await _call(
            client.get(JOBS.collection_path(None if args.all_namespaces else args.namespace)), "jobs"
        )
    finally:
        await client.close()
    jobs = [
        job
        for job in answer.get("items", [])
        if (not args.scheduler or job_scheduler_name(job) == args.scheduler)
        and args.selector in name_of(job)
        and (not args.queue or job_queue(job) == args.queue)
    ]
    jobs.sort(key=lambda j: (namespace_of(j), name_of(j)))
    sys.stdout.write(views.job_list(jobs, all_namespaces=args.all_namespaces))
    return 0


async def job_view(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "job")
    client = await _client(args)
    try:
        job = await _call(client.get(JOBS.object_path(name, args.namespace)), f"job {args.namespace}/{name}")
        events = await _events_for(client, args.namespace, c.JOB_KIND, name)
    finally:
        await client.close()
    sys.stdout.write(views.job_view(job, events, _now()))
    return 0


async def _job_command(args: argparse.Namespace, action: str, verb: str) -> int:
    name = _require(args.name, "--name", "job")
    client = await _client(args)
    try:
        job = await _call(client.get(JOBS.object_path(name, args.namespace)), f"job {args.namespace}/{name}")
        command = objects.command_for(job, action=action, namespace=args.namespace)
        await _call(client.create(COMMANDS.collection_path(args.namespace), command), f"{verb} job")
    finally:
        await client.close()
    print(f"{verb} job {name} successfully")
    return 0


async def job_suspend(args: argparse.Namespace) -> int:
    return await _job_command(args, "AbortJob", "suspend")


async def job_resume(args: argparse.Namespace) -> int:
    return await _job_command(args, "ResumeJob", "resume")


async def job_delete(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "job")
    client = await _client(args)
    try:
        await _call(client.delete(JOBS.object_path(name, args.namespace)), f"job {args.namespace}/{name}")
    finally:
        await client.close()
    print(f"delete job {name} successfully")
    return 0


async def _podgroup_of(client: KubeClient, job: JSON) -> JSON | None:
    name, namespace, uid = name_of(job), namespace_of(job), uid_of(job)
    try:
        return await client.get(PODGROUPS.object_path(f"{name}-{uid}", namespace))
    except ApiError as err:
        if not err.not_found:
            raise
    # A PodGroup made by another controller: find it by owner instead of by name.
    answer = await client.get(PODGROUPS.collection_path(namespace))
    for pg in answer.get("items", []):
        if any(ref.get("uid") == uid for ref in owner_references_of(pg)):
            found: JSON = pg
            return found
    return None


async def _reading(client: KubeClient, args: argparse.Namespace) -> inputs.Reading:
    try:
        return await inputs.read(client, args.scheduler_conf or None)
    except ConfError as err:
        raise objects.UsageError(str(err)) from None


async def job_why(args: argparse.Namespace) -> int:
    name = _require(args.name or args.name_flag, "NAME", "job")
    client = await _client(args)
    try:
        job: JSON | None
        try:
            job = await client.get(JOBS.object_path(name, args.namespace))
        except ApiError as err:
            if not err.not_found:
                raise CommandError(f"job {args.namespace}/{name}: {err.message}") from None
            job = None
        if job is not None:
            podgroup = await _podgroup_of(client, job)
        else:
            # Plain pods and other workloads have PodGroups of their own; accept their names too, and a
            # pod's (the agent scheduler's pods have no PodGroup).
            try:
                podgroup = await client.get(PODGROUPS.object_path(name, args.namespace))
            except ApiError as err:
                if not err.not_found:
                    raise CommandError(f"podgroup {args.namespace}/{name}: {err.message}") from None
                pod = await _call(
                    client.get(PODS.object_path(name, args.namespace)),
                    f"job, podgroup or pod {args.namespace}/{name}",
                )
                events = await _events_for(client, args.namespace, "Pod", name)
                sys.stdout.write(views.pod_why(pod, events, _now()))
                return 0
        events = (
            await _events_for(client, args.namespace, c.PODGROUP_KIND, name_of(podgroup)) if podgroup else []
        )
        sys.stdout.write(views.why(job, podgroup, events, _now()))
        if podgroup is not None and (args.forecast_seconds > 0 or args.whatif_seconds > 0):
            reading = await _reading(client, args)
            if args.forecast_seconds > 0:
                key = f"{namespace_of(podgroup) or args.namespace}/{name_of(podgroup)}"
                answer = inputs.eta(reading, bounds=Bounds(seconds=args.forecast_seconds))
                sys.stdout.write(job_section(answer, key, reading.source))
            if args.whatif_seconds > 0:
                budget = Budget(seconds=args.whatif_seconds)
                found = inputs.what_if(reading, podgroup, job, budget=budget)
                sys.stdout.write(what_would_make_it_run(found, reading.source))
    finally:
        await client.close()
    return 0


# --- queue ---------------------------------------------------------------------------------------------


async def queue_create(args: argparse.Namespace) -> int:
    body = objects.queue_object(
        name=args.name, weight=args.weight, state=args.state, parent=args.parent or None
    )
    client = await _client(args)
    try:
        await _call(client.create(QUEUES.collection_path(), body), f"create queue {args.name}")
    finally:
        await client.close()
    print(f"create queue {args.name} successfully")
    return 0


async def queue_delete(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "queue")
    client = await _client(args)
    try:
        await _call(client.delete(QUEUES.object_path(name)), f"queue {name}")
    finally:
        await client.close()
    print(f"delete queue {name} successfully")
    return 0


async def queue_operate(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "queue")
    actions = {"open": "OpenQueue", "close": "CloseQueue"}
    if args.action not in (*actions, "update"):
        raise objects.UsageError(
            f"--action: {args.action!r} is not valid; valid actions are open, close and update"
            if args.action
            else "--action: action can not be null; pass --action open|close|update"
        )
    client = await _client(args)
    try:
        if args.action == "update":
            if args.weight <= 0:
                raise objects.UsageError(
                    f"--weight: when updating queue {name}, weight must be specified and greater than 0"
                )
            await _call(
                client.patch(QUEUES.object_path(name), {"spec": {"weight": args.weight}}), f"queue {name}"
            )
        else:
            queue = await _call(client.get(QUEUES.object_path(name)), f"queue {name}")
            command = objects.command_for(
                queue, action=actions[args.action], namespace=QUEUE_COMMAND_NAMESPACE
            )
            await _call(
                client.create(COMMANDS.collection_path(QUEUE_COMMAND_NAMESPACE), command),
                f"{args.action} queue",
            )
    finally:
        await client.close()
    print(f"{args.action} queue {name} successfully")
    return 0


async def queue_list(args: argparse.Namespace) -> int:
    client = await _client(args)
    try:
        answer = await _call(client.get(QUEUES.collection_path()), "queues")
    finally:
        await client.close()
    queues = sorted(answer.get("items", []), key=name_of)
    sys.stdout.write(views.queue_list(queues))
    return 0


async def queue_get(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "queue")
    client = await _client(args)
    try:
        queue = await _call(client.get(QUEUES.object_path(name)), f"queue {name}")
        sys.stdout.write(views.queue_list([queue]))
        if args.forecast_seconds > 0:
            try:
                reading = await _reading(client, args)
            except ApiError as err:
                # Volcano's vcctl needs only the Queue: the table stands without the forecast, said why.
                sys.stdout.write(
                    f"\nNo forecast of its waiting jobs: cannot read the cluster ({err.message})\n"
                )
                return 0
            answer = inputs.eta(reading, bounds=Bounds(seconds=args.forecast_seconds))
            sys.stdout.write(views.queue_forecast(answer, name, reading.source))
    finally:
        await client.close()
    return 0


async def version(args: argparse.Namespace) -> int:
    from volcano_py import __version__

    print(f"vcctl (volcano-py) {__version__}, API {c.BATCH_API_VERSION}, {c.SCHEDULING_API_VERSION}")
    return 0


Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
HANDLERS: dict[tuple[str, str], Handler] = {
    ("job", "run"): job_run,
    ("job", "list"): job_list,
    ("job", "view"): job_view,
    ("job", "suspend"): job_suspend,
    ("job", "resume"): job_resume,
    ("job", "delete"): job_delete,
    ("job", "why"): job_why,
    ("queue", "create"): queue_create,
    ("queue", "delete"): queue_delete,
    ("queue", "operate"): queue_operate,
    ("queue", "list"): queue_list,
    ("queue", "get"): queue_get,
    ("version", "version"): version,
}
