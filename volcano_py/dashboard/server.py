"""The dashboard's web server (aiohttp): server-rendered pages, a JSON API, and server-sent events.

Pages: ``/`` (health, GPU totals, queues, waiting jobs), ``/queues``, ``/jobs``, ``/jobs/{ns}/{name}`` (the
``vcctl job why`` text and the what-if), ``/nodes`` (GPUs by HyperNode), ``/health``, and
``/events/{ns}/{kind}/{name}``. ``?fragment=1`` returns only ``<main>``'s content, which is what
``/static/app.js`` swaps in when ``/stream`` says something changed. ``/api/overview.json`` and
``/api/whatif/{ns}/{name}.json``, ``/api/eta.json`` and ``/api/eta/{ns}/{name}.json`` (position and estimated
start) serve the same numbers to scripts. Read-only: nothing here writes to the API.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import quote

from aiohttp import web

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_node_name, pod_phase
from volcano_py.api.objects import annotation_of, name_of, namespace_of
from volcano_py.forecast import job_section
from volcano_py.kube.client import ApiError
from volcano_py.kube.kinds import EVENTS, PODS
from volcano_py.kube.serving import DEFAULT_LIMITS, ServingLimits
from volcano_py.log import get_logger
from volcano_py.whatif.why import pod_why_lines, what_would_make_it_run, why_lines

from . import node_views, render, views
from .state import DashboardState

_log = get_logger(__name__)
STATIC_TYPES = {".css": "text/css", ".js": "text/javascript"}
OVERVIEW_JOBS = 50
# A job page waits this long for its what-if before it shows without it (its script fetches it then).
WHATIF_INLINE_SECONDS = 1.0


def _now() -> datetime:
    return datetime.now(UTC)


class Dashboard:
    def __init__(self, state: DashboardState, limits: ServingLimits = DEFAULT_LIMITS) -> None:
        self.state = state
        self.limits = limits
        self.app = limits.application()
        routes = self.app.router
        routes.add_get("/", self.overview)
        routes.add_get("/queues", self.queues)
        routes.add_get("/jobs", self.jobs)
        routes.add_get("/jobs/{namespace}/{name}", self.job)
        routes.add_get("/nodes", self.nodes)
        routes.add_get("/health", self.health)
        routes.add_get("/events/{namespace}/{kind}/{name}", self.events)
        routes.add_get("/stream", self.stream)
        routes.add_get("/static/{file}", self.static)
        routes.add_get("/api/overview.json", self.overview_json)
        routes.add_get("/api/whatif/{namespace}/{name}.json", self.whatif_json)
        routes.add_get("/api/eta.json", self.eta_json)
        routes.add_get("/api/eta/{namespace}/{name}.json", self.job_eta_json)
        routes.add_get("/healthz", self.healthz)
        self._static: dict[str, bytes] = {}

    # --- plumbing ---------------------------------------------------------------------------------------

    def _page(self, request: web.Request, title: str, main: str) -> web.Response:
        if request.query.get("fragment"):
            return web.Response(text=main, content_type="text/html")
        return web.Response(text=render.layout(title, main, path=request.path), content_type="text/html")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["file"]
        suffix = name[name.rfind(".") :] if "." in name else ""
        if "/" in name or suffix not in STATIC_TYPES:
            raise web.HTTPNotFound()
        body = self._static.get(name)
        if body is None:
            try:
                body = resources.files("volcano_py.dashboard").joinpath("static", name).read_bytes()
            except FileNotFoundError:
                raise web.HTTPNotFound() from None
            self._static[name] = body
        return web.Response(
            body=body, content_type=STATIC_TYPES[suffix], headers={"Cache-Control": "max-age=60"}
        )

    async def healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``change`` whenever the generation moves; a comment every 15 s keeps proxies
        from closing an idle stream."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        seen = self.state.generation
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            await response.write(b"retry: 2000\n\n")
            while True:
                current = await self.state.wait_change(seen, wait=15.0)
                if current == seen:
                    await response.write(b": keep-alive\n\n")
                    continue
                seen = current
                await response.write(f"event: change\ndata: {current}\n\n".encode())
        return response

    # --- pages ------------------------------------------------------------------------------------------

    def _queue_rows(self) -> list[views.QueueRow]:
        derived = self.state.derived()
        return views.queue_rows(derived.cluster, derived.snapshot, self.state.deserved)

    def _queues_table(self) -> str:
        return render.queues_table(self._queue_rows(), self.state.forecast)

    async def overview(self, request: web.Request) -> web.Response:
        now = _now()
        derived = self.state.derived()
        jobs = views.job_rows(derived.cluster, now)
        waiting = [j for j in jobs if j.pending]
        main = (
            "<h1>Overview</h1>"
            + render.totals_line(node_views.gpu_totals(derived.cells))
            + render.health_block(self.state.health(now))
            + "<h2>Queues</h2>"
            + self._queues_table()
            + f"<h2>Waiting jobs ({len(waiting)})</h2>"
            + render.jobs_table(waiting, limit=OVERVIEW_JOBS, forecast=self.state.forecast)
        )
        return self._page(request, "Overview", main)

    async def queues(self, request: web.Request) -> web.Response:
        return self._page(request, "Queues", "<h1>Queues</h1>" + self._queues_table())

    async def jobs(self, request: web.Request) -> web.Response:
        rows = views.job_rows(self.state.derived().cluster, _now())
        table = render.jobs_table(rows, forecast=self.state.forecast)
        return self._page(request, "Jobs", f"<h1>Jobs ({len(rows)})</h1>" + table)

    async def nodes(self, request: web.Request) -> web.Response:
        derived = self.state.derived()
        main = "<h1>GPUs by HyperNode</h1>" + render.gpu_grid(
            node_views.node_groups(derived.cells, derived.snapshot), node_views.gpu_totals(derived.cells)
        )
        return self._page(request, "GPUs", main)

    async def health(self, request: web.Request) -> web.Response:
        main = "<h1>Scheduler</h1>" + render.health_block(self.state.health(_now()))
        main += f"<p>What-if sessions run with {render.e(self.state.conf_source)}.</p>"
        return self._page(request, "Scheduler", main)

    def _find_job(
        self, namespace: str, name: str
    ) -> tuple[views.JobRow, dict[str, Any] | None, dict[str, Any] | None]:
        cluster = self.state.derived().cluster
        row = next(
            (r for r in views.job_rows(cluster, _now()) if r.namespace == namespace and r.name == name), None
        )
        if row is None:
            raise web.HTTPNotFound(text=f"no Job, PodGroup or waiting agent pod {namespace}/{name}")
        job = next(
            (
                j
                for j in cluster.jobs
                if namespace_of(j) == namespace and name_of(j) == name
            ),
            None,
        ) if row.kind == c.JOB_KIND else None  # fmt: skip
        podgroup = next(
            (pg for pg in cluster.podgroups if namespace_of(pg) == namespace and name_of(pg) == row.podgroup),
            None,
        )
        return row, job, podgroup

    async def job(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        row, job, podgroup = self._find_job(namespace, name)
        if row.kind == PODS.kind:
            return self._pod_page(request, row)
        why_text = "\n".join(why_lines(job, podgroup)) + "\n"
        if podgroup is not None and row.pending:
            pending = self.state.what_if(f"{namespace}/{row.podgroup}", job)
            done, _ = await asyncio.wait([pending], timeout=WHATIF_INLINE_SECONDS)
            if done:
                text = what_would_make_it_run(pending.result(), self.state.conf_source)
                whatif_html = f'<pre id="whatif-text">{render.e(text)}</pre>'
            else:
                # Still searching: the page shows now, and its script fills this in when the answer is in.
                src = f"/api/whatif/{quote(namespace)}/{quote(name)}.json"
                whatif_html = (
                    f'<pre id="whatif-text" data-src="{render.e(src)}">Searching: each change is proved by '
                    "a what-if session…</pre>"
                )
        else:
            whatif_html = "<p>Not waiting.</p>"
        pods = [
            (name_of(p), pod_phase(p).value, pod_node_name(p))
            for p in self.state.derived().cluster.pods
            if row.podgroup
            and namespace_of(p) == namespace
            and annotation_of(p, c.KUBE_GROUP_NAME_KEY) == row.podgroup
        ]
        page = render.job_page(row, why_text, self._eta_text(row), whatif_html, sorted(pods))
        return self._page(request, row.key, page)

    def _pod_page(self, request: web.Request, row: views.JobRow) -> web.Response:
        """A pod placed one by one: its scheduler's reason; no gang, so no forecast or what-if search."""
        pod = next(
            p
            for p in self.state.derived().cluster.pods
            if namespace_of(p) == row.namespace and name_of(p) == row.name
        )
        why_text = "\n".join(pod_why_lines(pod)) + "\n"
        eta_text = "Placed one by one by its scheduler as soon as a node can take it.\n"
        whatif_html = "<p>No gang to search for: the reason above names what the pod waits for.</p>"
        page = render.job_page(row, why_text, eta_text, whatif_html, [(row.name, row.phase, "")])
        return self._page(request, row.key, page)

    def _eta_text(self, row: views.JobRow) -> str:
        forecast = self.state.forecast
        if forecast is None:
            return "The forecast is being computed (sessions of the scheduler's conf run forward)…\n"
        return job_section(forecast, f"{row.namespace}/{row.podgroup}", self.state.conf_source)

    async def events(self, request: web.Request) -> web.Response:
        namespace = request.match_info["namespace"]
        kind, name = request.match_info["kind"], request.match_info["name"]
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        try:
            answer = await self.state.client.get(EVENTS.collection_path(namespace), fieldSelector=selector)
        except ApiError as err:
            raise web.HTTPBadGateway(text=f"events of {kind} {namespace}/{name}: {err.message}") from None
        now = _now()
        items = sorted(
            answer.get("items", []), key=lambda ev: str(ev.get("lastTimestamp") or ev.get("eventTime") or "")
        )
        rows = [
            (
                views.age_text(ev.get("lastTimestamp") or ev.get("eventTime"), now),
                str(ev.get("type", "")),
                str(ev.get("reason", "")),
                str(ev.get("message", "")),
            )
            for ev in reversed(items)
        ]
        return self._page(request, f"events {name}", render.events_page(f"{kind} {namespace}/{name}", rows))

    # --- JSON -------------------------------------------------------------------------------------------

    async def overview_json(self, _request: web.Request) -> web.Response:
        now = _now()
        derived = self.state.derived()
        totals = node_views.gpu_totals(derived.cells)
        health = self.state.health(now)
        body = {
            "generation": derived.generation,
            "gpus": {
                "total": totals.gpus,
                "used": totals.used,
                "free": totals.free,
                "stranded": totals.stranded,
            },
            "queues": [
                {
                    "name": q.name,
                    "parent": q.parent,
                    "weight": q.weight,
                    "pending_jobs": q.pending_jobs,
                    "running_jobs": q.running_jobs,
                    "resources": {
                        b.resource: {
                            "allocated": b.text(b.allocated),
                            "deserved": b.text(b.deserved),
                            "capability": b.text(b.capability),
                        }
                        for b in q.bars
                    },
                }
                for q in self._queue_rows()
            ],
            "jobs": [
                {
                    "key": j.key,
                    "kind": j.kind,
                    "queue": j.queue,
                    "phase": j.phase,
                    "running": j.running,
                    "tasks": j.tasks,
                    "reason": j.reason,
                }
                for j in views.job_rows(derived.cluster, now)
            ],
            "health": {
                "leader": health.leader,
                "binds_per_second": health.binds_per_second,
                "cycle_ms": health.cycle_ms,
                "errors": [list(err) for err in health.errors],
            },
        }
        return web.json_response(body)

    async def whatif_json(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        row, job, podgroup = self._find_job(namespace, name)
        if podgroup is None:
            raise web.HTTPNotFound(text=f"{namespace}/{name} has no PodGroup yet")
        answer = await self.state.what_if(f"{namespace}/{row.podgroup}", job)
        return web.json_response(
            {
                "job": row.key,
                "section": what_would_make_it_run(answer, self.state.conf_source),
                "podgroup": answer.job,
                "runs_now": answer.runs_now,
                "suggestions": [s.text() for s in answer.suggestions],
                "text": answer.text(),
                "sessions": answer.sessions,
                "seconds": round(answer.seconds, 3),
            }
        )

    async def eta_json(self, _request: web.Request) -> web.Response:
        forecast = self.state.forecast
        if forecast is None:
            raise web.HTTPServiceUnavailable(text="the forecast is being computed; retry in a few seconds")
        return web.json_response({**forecast.as_json(), "conf": self.state.conf_source})

    async def job_eta_json(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        row, _job, _podgroup = self._find_job(namespace, name)
        forecast = self.state.forecast
        if forecast is None:
            raise web.HTTPServiceUnavailable(text="the forecast is being computed; retry in a few seconds")
        eta = forecast.etas.get(f"{namespace}/{row.podgroup}")
        return web.json_response(
            {
                "job": row.key,
                "now": forecast.as_json()["now"],
                "waiting": eta is not None,
                **({"eta": eta.as_json(), "text": eta.lines(forecast.now)} if eta is not None else {}),
            }
        )


async def serve(state: DashboardState, *, host: str, port: int, stop: asyncio.Event,
                started: asyncio.Future[int] | None = None,
                limits: ServingLimits = DEFAULT_LIMITS) -> None:  # fmt: skip
    """Mirror the cluster and serve until ``stop`` is set; ``started`` gets the bound port. Clients are held
    to ``limits`` (a slow or silent connection is closed; the ``/stream`` of a page open stays)."""
    dashboard = Dashboard(state, limits)
    runner = web.AppRunner(dashboard.app, shutdown_timeout=1.0, **limits.runner_kwargs())
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=limits.backlog)
    mirror = asyncio.ensure_future(state.run())
    try:
        await site.start()
        bound = int(runner.addresses[0][1]) if runner.addresses else port
        _log.info("dashboard listening", url=f"http://{host}:{bound}/")
        if started is not None and not started.done():
            started.set_result(bound)
        waiter = asyncio.ensure_future(stop.wait())
        await asyncio.wait([mirror, waiter], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if mirror.done() and not mirror.cancelled():
            mirror.result()  # the mirror died: raise why
    finally:
        mirror.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await mirror
        await runner.cleanup()
