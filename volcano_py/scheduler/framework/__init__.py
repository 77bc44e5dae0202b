"""The scheduling framework: snapshot types, Session, Statement, extension points, conf parsing.

Inputs (``objects``): ``build_snapshot(ClusterObjects(nodes=, pods=, podgroups=, ...), scheduler_names)``
from Kubernetes JSON dicts (over ``snapshot.Snapshot.build``); ``TaskInfo.from_pod``, ``NodeInfo.from_node``,
``QueueInfo.from_queue``, ``JobInfo.from_podgroup``. Outputs (``decisions``): ``SessionResult`` with
``Bind``, ``Evict``, ``Pipeline``, ``PodGroupUpdate``, ``QueueUpdate``, ``Explanation``. The entry point
is ``volcano_py.scheduler.core.run_session(snapshot, conf, now)``; conf text is parsed by ``core.load_conf``.

Extending it:

* **A plugin** is a class with ``name`` and a constructor taking ``Arguments`` (validate them there; raise
  ``ConfError`` naming the key). It implements extension points by having the methods of the Protocols
  in ``extension`` -- ``job_order`` (+ optional ``job_order_key``), ``queue_order``, ``task_order``,
  ``predicate`` (+ ``predicate_dynamic``), ``node_order`` (+ ``class_split``: pods it scores apart get
  classes of their own, placed pod by pod; + ``pair_preference``: the same wish as a score per pair of pods
  on one node, for a count placer), ``job_valid``, ``job_ready``, ``job_pipelined``,
  ``job_starving``, ``job_enqueueable``, ``job_enqueued``, ``allocatable``, ``overused``,
  ``preemptable``, ``reclaimable``, ``preemptive``, ``on_allocate``/``on_deallocate``, ``place_job``,
  ``explain_allocatable``/``explain_enqueue``/``explain_preemptive`` (why it said no), ``queue_deserved``,
  ``on_session_open``/``on_session_close``. ``extension.EXTENSION_POINTS`` is the one declared list; the
  session keeps the implementers in ``ssn.points`` (one typed attribute per point). A new point is a
  Protocol, an entry there and a ``Points`` attribute. Register the plugin with one line in
  ``scheduler/builtin.py``.
* **An action** is a class with ``name``, a constructor taking ``Arguments`` (from the conf's
  ``configurations``) and ``execute(ssn)``; it changes state only through ``with ssn.statement() as stmt``
  (``allocate``/``pipeline``/``evict``, then ``commit``/``hold``/``discard``). Register it in
  ``scheduler/builtin.py``. Preempt/reclaim share ``actions.gangplan.evict_for_gang`` with the victim rule
  ``ssn.preemptable``/``ssn.reclaimable`` (a victim needs every implementing plugin's consent).
* **A solver** replaces greedy gang placement through a plugin implementing ``place_job(ssn, stmt, job)``:
  return ``Placed`` after allocating through ``stmt``, or None to leave the job to greedy placement
  (``actions.placement.place_greedy``).
  ``ssn.table`` (numpy node state), ``ssn.task_class``, ``ssn.predicate`` and ``ssn.node_scores`` give it
  per-class feasibility and scores over all nodes.

Performance model: pods with the same spec form a ``TaskClass``; predicates are cached per class
constraints (request excluded), node scores are vectorised and, for a gang, computed once as a ladder
(each node's 1st, 2nd, ... pod, via ``node_order``'s ``extra``) over the nodes the gang can reach, so
each pod then costs an argmax. Like Volcano, only ``sampling.NodeSampling.count`` feasible nodes are
scored per task on big clusters (allocate arguments ``percentageOfNodesToFind``,
``minPercentageOfNodesToFind``, ``minNodesToFind``).
"""
