"""The Volcano-compatible scheduler, from a cluster mirror to ``pods/binding``.

The pure core (no I/O, no asyncio), lowest layer first:

* ``framework/``: the snapshot views (JobInfo, TaskInfo, NodeInfo, QueueInfo), Session, Statement, the typed
  extension points, conf parsing and the confs volcano-py ships;
* ``solver/``: CP-SAT gang placement by HyperNode domain over its own problem types, and the HyperNode tree
  (``solver/hypernode_tree.py``) it places into;
* ``plugins/``: policies over the framework's extension points, one module each (``cpsat`` adapts the solver);
* ``actions/``: the steps of a cycle (enqueue, allocate, backfill, preempt, reclaim) and greedy placement;
* ``builtin.py``: ``default_registry()``, the one table of built-in actions and plugins (register new ones
  there); ``core.py``: the one door for every reader (runtime, dashboard, what-if, simulator): ``load_conf``,
  ``build_snapshot`` (a ``ClusterObjects`` in, a ``Snapshot`` without malformed objects out) and
  ``run_session`` (one cycle: snapshot in, decisions out).

The runtime (``runtime/``) is the imperative shell: ``cache`` mirrors the cluster by list+watch, ``cycle``
hands the mirror to the core's ``build_snapshot`` and runs the session, ``binder`` sends binds, evictions and
status writes, and ``runner`` is the process (periodic cycles, leader election, conf reload, metrics).
"""
