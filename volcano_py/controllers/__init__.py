"""The operator: Volcano's Job, PodGroup, Queue, Command and TTL controllers.

The decisions (state machine, policy matching, pod and PodGroup building, status computation) live in pure
modules under ``controllers.job`` and beside it; the Kopf handlers in ``controllers.shell`` observe the
cluster, call them, and carry out the plans they return.
"""
