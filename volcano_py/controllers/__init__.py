"""The operator: Volcano's Job, PodGroup, Queue, Command and TTL controllers.

The decisions (state machine, policy matching, pod and PodGroup building, status computation) live in pure
modules under ``controllers.job``, ``controllers.queue``, ``plainpod`` and ``ttl``; the Kopf handlers in
``controllers.shell`` observe the cluster, call them, and carry out the plans they return.
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
