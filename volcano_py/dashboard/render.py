"""The dashboard's HTML, server-rendered from the rows in ``views`` (pure: strings in, strings out).

Every page is ``layout(main)``; live updates re-fetch the same URL with ``?fragment=1`` and swap ``<main>``,
so the first paint and every update show the same markup. Numbers a person reads are also in ``data-*``
attributes, which the browser test and scripts read without parsing prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from volcano_py.forecast import Forecast
from volcano_py.resources import GPU

from .node_views import GpuTotals, Group, NodeCell
from .views import Bar, Health, JobRow, QueueRow

NAV = (
    ("/", "Overview"),
    ("/queues", "Queues"),
    ("/jobs", "Jobs"),
    ("/nodes", "GPUs"),
    ("/health", "Scheduler"),
)
RESOURCE_LABEL = {GPU: "GPU", "cpu": "CPU", "memory": "memory"}


def e(value: object) -> str:
    return escape(str(value), quote=True)


def layout(title: str, main: str, *, path: str) -> str:
    here = ' class="here"'
    links = "".join(f'<a href="{href}"{here if href == path else ""}>{label}</a>' for href, label in NAV)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · volcano-py</title>"
        '<link rel="stylesheet" href="/static/app.css"><script defer src="/static/app.js"></script></head>'
        f"<body><header><strong>volcano-py</strong><nav>{links}</nav>"
        '<span id="live" title="live updates from the API server\'s watches">connecting…</span></header>'
        f'<main id="main">{main}</main></body></html>\n'
    )


# --- queues ----------------------------------------------------------------------------------------------


def _pct(value: int | None, scale: int) -> float:
    return 0.0 if value is None else min(100.0, 100.0 * value / max(scale, 1))


def bar(queue: str, b: Bar) -> str:
    marks = ""
    if b.deserved is not None:
        marks += f'<span class="mark deserved" style="left:{_pct(b.deserved, b.scale):.2f}%"></span>'
    if b.capability is not None:
        marks += f'<span class="mark capability" style="left:{_pct(b.capability, b.scale):.2f}%"></span>'
    over = " over" if b.deserved is not None and b.allocated > b.deserved else ""
    label = RESOURCE_LABEL.get(b.resource, b.resource)
    numbers = f"{b.text(b.allocated)} / {b.text(b.deserved)} / {b.text(b.capability)}"
    return (
        f'<div class="barrow" data-queue="{e(queue)}" data-resource="{e(b.resource)}" '
        f'data-allocated="{e(b.text(b.allocated))}" data-deserved="{e(b.text(b.deserved))}" '
        f'data-capability="{e(b.text(b.capability))}">'
        f'<span class="res">{e(label)}</span>'
        f'<span class="bar{over}"><span class="fill" style="width:{_pct(b.allocated, b.scale):.2f}%"></span>'
        f"{marks}</span>"
        f'<span class="nums" title="allocated / deserved / capability">{e(numbers)}</span></div>'
    )


def _head_start(forecast: Forecast | None, queue: str) -> str:
    """When the queue's first waiting job is expected to start (``-``: none waits, or no forecast yet)."""
    etas = forecast.queue(queue) if forecast is not None else []
    if not etas or forecast is None:
        return '<td class="eta">-</td>'
    head = etas[0]
    return (
        f'<td class="eta" data-head="{e(head.name)}" data-basis="{e(head.basis.value)}">'
        f"{e(head.name)}: {e(head.in_text(forecast.now))} ({e(head.basis.value)})</td>"
    )


def queues_table(rows: Sequence[QueueRow], forecast: Forecast | None = None) -> str:
    if not rows:
        return "<p>No queues.</p>"
    body = []
    for q in rows:
        bars = "".join(bar(q.name, b) for b in q.bars)
        body.append(
            f'<tr data-queue="{e(q.name)}"><td class="name" style="padding-left:{0.6 + q.depth * 1.2:.1f}em">'
            f"{e(q.name)}{' <em>over deserved</em>' if q.overused else ''}</td>"
            f"<td>{q.weight}</td><td>{e(q.state)}</td>"
            f'<td class="num" data-pending="{q.pending_jobs}">{q.pending_jobs}</td>'
            f'<td class="num" data-running="{q.running_jobs}">{q.running_jobs}</td>'
            f"{_head_start(forecast, q.name)}<td>{bars}</td></tr>"
        )
    return (
        '<table class="queues"><thead><tr><th>queue</th><th>weight</th><th>state</th><th>pending jobs</th>'
        "<th>running jobs</th><th>first waiting job starts</th><th>allocated / deserved / capability</th>"
        "</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        '<p class="legend"><span class="swatch fill"></span> allocated <span class="swatch deserved"></span> '
        'deserved <span class="swatch capability"></span> capability; bar width = the cluster\'s total</p>'
    )


# --- jobs ------------------------------------------------------------------------------------------------


def job_href(row: JobRow) -> str:
    return f"/jobs/{quote(row.namespace)}/{quote(row.name)}"


def events_href(namespace: str, kind: str, name: str) -> str:
    return f"/events/{quote(namespace)}/{quote(kind)}/{quote(name)}"


def _eta_cell(row: JobRow, forecast: Forecast | None) -> str:
    eta = forecast.etas.get(f"{row.namespace}/{row.podgroup}") if forecast is not None else None
    if eta is None or forecast is None:
        return '<td class="eta">-</td>'
    return (
        f'<td class="eta" data-position="{eta.position}" data-basis="{e(eta.basis.value)}">'
        f"{eta.position} of {eta.waiting}: {e(eta.in_text(forecast.now))} ({e(eta.basis.value)})</td>"
    )


def jobs_table(rows: Sequence[JobRow], *, limit: int | None = None, forecast: Forecast | None = None) -> str:
    if not rows:
        return "<p>No jobs.</p>"
    shown = rows if limit is None else rows[:limit]
    body = []
    for r in shown:
        body.append(
            f'<tr data-job="{e(r.key)}" class="{"pending" if r.pending else ""}">'
            f'<td><a href="{job_href(r)}">{e(r.key)}</a></td><td>{e(r.kind)}</td><td>{e(r.queue)}</td>'
            f'<td class="phase">{e(r.phase)}</td>'
            f'<td class="num">{r.running}/{r.tasks} (min {r.min_available})</td>'
            f'<td class="num">{e(r.age)}</td>{_eta_cell(r, forecast)}'
            f'<td class="reason">{e(r.reason)}</td></tr>'
        )
    more = (
        f'<p><a href="/jobs">all {len(rows)} jobs</a></p>' if limit is not None and len(rows) > limit else ""
    )
    return (
        '<table class="jobs"><thead><tr><th>job</th><th>kind</th><th>queue</th><th>phase</th>'
        "<th>running/tasks</th><th>age</th><th>position: estimated start (basis)</th>"
        "<th>why pending (the scheduler's words)</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{more}"
    )


def job_page(
    row: JobRow, why_text: str, eta_text: str, whatif_html: str, pods: Sequence[tuple[str, str, str]]
) -> str:
    pod_rows = "".join(
        f"<tr><td>{e(name)}</td><td>{e(phase)}</td><td>{e(node or '-')}</td></tr>"
        for name, phase, node in pods
    )
    events = events_href(row.namespace, "PodGroup", row.podgroup) if row.podgroup else ""
    job_events = events_href(row.namespace, row.kind, row.name)
    return (
        f'<h1>{e(row.kind)} {e(row.key)}</h1><p class="facts">queue <b>{e(row.queue)}</b> · phase '
        f'<b class="phase">{e(row.phase)}</b> · {row.running}/{row.tasks} running (min {row.min_available}) '
        f'· age {e(row.age)} · events: <a href="{job_events}">{e(row.kind)}</a>'
        + (f' · <a href="{events}">PodGroup</a>' if events else "")
        + "</p><h2>Why (as <code>vcctl job why</code> says)</h2>"
        f'<pre id="why">{e(why_text)}</pre>'
        f'<h2>Position and estimated start</h2><pre id="eta">{e(eta_text)}</pre>'
        f'<h2>What would make it run</h2><section id="whatif">{whatif_html}</section>'
        f"<h2>Pods</h2><table><thead><tr><th>pod</th><th>phase</th><th>node</th></tr></thead>"
        f"<tbody>{pod_rows or '<tr><td colspan=3>none yet</td></tr>'}</tbody></table>"
    )


def events_page(title: str, rows: Sequence[tuple[str, str, str, str]]) -> str:
    body = "".join(
        f"<tr><td>{e(a)}</td><td>{e(t)}</td><td>{e(r)}</td><td>{e(m)}</td></tr>" for a, t, r, m in rows
    )
    return (
        f"<h1>Events of {e(title)}</h1><table><thead><tr><th>age</th><th>type</th><th>reason</th>"
        f"<th>message</th></tr></thead><tbody>{body or '<tr><td colspan=4>none</td></tr>'}</tbody></table>"
    )


# --- GPUs by HyperNode -----------------------------------------------------------------------------------


def totals_line(t: GpuTotals) -> str:
    return (
        f'<p class="totals" id="gpu-totals" data-gpus="{t.gpus}" data-used="{t.used}" data-free="{t.free}" '
        f'data-stranded="{t.stranded}">{t.nodes} nodes · {t.gpus} GPUs: <b>{t.used}</b> used, '
        f'<b id="gpu-free">{t.free}</b> free, of which <b>{t.stranded}</b> stranded</p>'
    )


def _node(cell: NodeCell) -> str:
    gpus = (
        '<i class="used"></i>' * cell.used
        + '<i class="stranded"></i>' * cell.stranded
        + '<i class="free"></i>' * (cell.free - cell.stranded)
    )
    state = "" if cell.ready else " notready"
    state += " cordoned" if cell.cordoned else ""
    owner = cell.owner
    shard = f' data-shard="{e(owner.shard)}"' if owner else ""
    owned = f"; NodeShard {owner.text}" if owner else ""
    label = f'<span class="shard">{e(owner.text)}</span>' if owner else ""
    return (
        f'<div class="node{state}" data-node="{e(cell.name)}" data-free="{cell.free}" '
        f'data-used="{cell.used}" data-stranded="{cell.stranded}"{shard} '
        f'title="{e(cell.name)}: {cell.used} used, {cell.free} free ({cell.stranded} stranded){e(owned)}">'
        f'<span class="nname">{e(cell.name)}</span>{label}<span class="gpus">{gpus}</span></div>'
    )


def _group(group: Group) -> str:
    tier = f" (tier {group.tier})" if group.tier is not None else ""
    cells = group.cells()
    free = sum(c.free for c in cells)
    inner = "".join(_group(ch) for ch in group.children) + "".join(_node(n) for n in group.nodes)
    return (
        f'<section class="group" data-group="{e(group.name)}" data-free="{free}"><h3>{e(group.name)}{tier} · '
        f'{free} free of {sum(c.gpus for c in cells)}</h3><div class="members">{inner}</div></section>'
    )


def gpu_grid(groups: Sequence[Group], totals: GpuTotals) -> str:
    legend = (
        '<p class="legend"><i class="used"></i> used <i class="free"></i> free '
        '<i class="stranded"></i> stranded (free, but no waiting pod fits beside it)</p>'
    )
    if any(cell.owner for g in groups for cell in g.cells()):
        legend += '<p class="legend">Under each node\'s name: the NodeShard (scheduler) that owns it.</p>'
    return totals_line(totals) + legend + "".join(_group(g) for g in groups)


# --- scheduler health ------------------------------------------------------------------------------------


def health_block(h: Health) -> str:
    cycle = f"{h.cycle_ms:.1f} ms" if h.cycle_ms is not None else "unknown (pass --scheduler-metrics URL)"
    errors = "".join(
        f"<tr><td>{e(age)}</td><td>{e(obj)}</td><td>{e(msg)}</td></tr>" for age, obj, msg in h.errors
    )
    return (
        f'<dl class="health"><dt>leader</dt><dd id="leader">{e(h.leader)}</dd>'
        f"<dt>Lease renewed</dt><dd>{e(h.lease_age)} ago</dd>"
        f'<dt>binds/s (last minute)</dt><dd id="binds">{h.binds_per_second:.2f}</dd>'
        f'<dt>scheduling cycle</dt><dd id="cycle">{e(cycle)}</dd></dl>'
        "<h3>Latest warnings from the scheduler</h3>"
        f"<table><thead><tr><th>age</th><th>object</th><th>message</th></tr></thead>"
        f"<tbody>{errors or '<tr><td colspan=3>none</td></tr>'}</tbody></table>"
    )
