"""The Volcano-compatible scheduler.

Layers, lowest first: ``framework`` (snapshot types, Session, Statement, extension points, conf parsing),
``plugins`` and ``solver`` (policies over the framework), ``actions`` (enqueue, allocate, backfill, ...),
then ``core`` (``run_session``: one scheduling cycle, snapshot in, decisions out) and ``registry`` (the
explicit table of built-in actions and plugins). Everything up to ``core`` is pure: no I/O, no asyncio.
The runtime (cache, binder, runner) feeds snapshots in and sends the decisions to the API.
"""
