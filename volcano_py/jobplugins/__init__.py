"""Job plugins: what makes MPI, PyTorch, TensorFlow and Ray programs run unchanged inside a Volcano Job.

A Job names its plugins in ``spec.plugins`` (plugin name -> list of Volcano-style arguments, e.g.
``{pytorch: ["--master=master", "--worker=worker", "--port=23456"], svc: []}``). Known plugins: env, svc, ssh,
mpi, pytorch, tensorflow, ray, hcclrank; each module's docstring lists its arguments and Volcano's defaults.
Everything here is pure: no API calls, no clock; the only randomness is the ssh key pair, injectable. It is a
leaf under both ``controllers`` (which run the plugins) and ``webhooks`` (which check their arguments).

How the Job controller calls them
---------------------------------
1. ``plugins = build_plugins(job)`` — ``job`` is the Job as a dict (``metadata.name/namespace/uid``,
   ``spec.tasks``, ``spec.plugins``). Raises ``JobPluginError`` (``.field``, ``.message``) for an unknown
   plugin, a bad argument or a missing master/head task: record it as a Job event and do not create pods.
2. Before creating the PodGroup and pods (Volcano's ``initiateJob``): ``for obj in plugins.on_job_add(job)``
   reconcile ``obj.body`` by ``obj.policy`` — ``ApplyPolicy.CREATE``: create if absent, keep an existing one
   (ssh keys, Services); ``ApplyPolicy.REPLACE``: create if absent, replace if different. Then merge
   ``plugins.controlled_resources()`` into ``status.controlledResources``. The call is idempotent, so a
   controller restart keeps the objects consistent without deleting them. On every sync after the spec
   changed (scale) or the Job restarted (Volcano's ``OnJobUpdate``), write ``plugins.on_job_update(job)``
   over what exists: only the svc hosts ConfigMap, which follows the replicas.
3. For each pod built from task ``t`` at index ``i`` — a dict whose ``metadata.name`` is ``<job>-<t>-<i>``
   and whose labels include ``volcano.sh/job-name``, ``volcano.sh/job-namespace`` and ``volcano.sh/task-spec``
   (the svc and ray Services select on them) — call ``plugins.on_pod_create(job, pod, t, i)`` before creating
   it. It mutates ``pod`` in place: env, ports, volumes and mounts, hostname/subdomain, commands, annotations.
   The same Job and index always give the same pod, so a recreated pod matches its predecessor.
4. When the Job reaches a terminal phase (Completed, Failed, Aborted, Terminated), as Volcano does in
   ``killJob``, delete ``plugins.on_job_delete(job)`` (``ObjectRef``: apiVersion, kind, namespace, name),
   ignoring NotFound, and drop the ``plugin-*`` keys from ``status.controlledResources``. Deleting the Job
   needs nothing: every object carries a controller ``ownerReference`` to the Job, so the garbage collector
   removes it.

The plugins a framework relies on (svc for tensorflow/mpi/pytorch/ray, ssh for mpi) are among the Job
defaults (``api.job_defaults``). The admission webhook uses ``argument_problems`` (bad arguments, missing
ray head; ``api.job_rules`` reports unknown names and the mpi master) and ``argument_warnings`` (arguments a
plugin will not read, admitted as Volcano admits them). ``plugin_problems`` lists every problem at once,
for tools that do not run those rules.
"""

from volcano_py.jobplugins.registry import (
    KNOWN_PLUGINS,
    PLUGIN_BUILDERS,
    PluginSet,
    argument_problems,
    argument_warnings,
    build_plugins,
    plugin_args,
    plugin_problems,
)
from volcano_py.jobplugins.types import (
    ApplyPolicy,
    JobPlugin,
    JobPluginError,
    JobUpdateHook,
    ManagedObject,
    ObjectRef,
)

__all__ = [
    "KNOWN_PLUGINS",
    "PLUGIN_BUILDERS",
    "ApplyPolicy",
    "JobPlugin",
    "JobPluginError",
    "JobUpdateHook",
    "ManagedObject",
    "ObjectRef",
    "PluginSet",
    "argument_problems",
    "argument_warnings",
    "build_plugins",
    "plugin_args",
    "plugin_problems",
]
