"""The operator: Volcano's Job, PodGroup, Queue, Command and TTL controllers.

One folder per kind (``job``, ``flow`` for JobFlow, JobTemplate and CronJob, ``queue``, ``podgroup`` for plain
pods, ``hypernode``), each holding its pure rules (state machine, policy matching, pod and PodGroup building,
status computation) and its ``worker``, which observes the cluster, calls them, and carries out the plans they
return. ``runtime`` holds what the workers share: the Kopf registration (``runtime/handlers.py``), work
queues, context and metrics.
``controllers.operator.run_controller(options, stop_event)`` runs it all in-process (own thread and event
loop, Lease election, metrics on :8081); ``volcano-py controller`` is the process.

Where we knowingly differ from Volcano's controller (each is tested in ``tests/controllers``):

* a pod first seen already Failed (it failed while no controller ran) still fires its ``PodFailed`` policy;
* a pod preempted or evicted (``DisruptionTarget`` condition) is replaced, never counted as failed, and a
  restart it causes does not consume ``maxRetry``;
* the name of a PVC the controller creates for ``volumes[].volumeClaim`` is derived from the Job's uid
  instead of being random and written back into the spec;
* after killing one task or pod, the status counts every pod (Volcano counts only the killed ones until the
  next sync), and ``status.version`` moves only when a kill deletes pods or the phase changes;
* a Command is deleted with a uid precondition before it runs, so it runs at most once even with two
  operator replicas; the Job worker retries the command's action until its writes succeed.
"""
