"""The registry of Job plugins: Job ``spec.plugins`` in, a ``PluginSet`` out, or errors naming the entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from volcano_py.api.bodies.job import job_plugins
from volcano_py.jobplugins import hcclrank, mpi, pytorch, ray, ssh, svc, tensorflow
from volcano_py.jobplugins.env import EnvPlugin
from volcano_py.jobplugins.flags import Flag, ignored_arguments
from volcano_py.jobplugins.hcclrank import HcclRankPlugin
from volcano_py.jobplugins.helpers import find_task
from volcano_py.jobplugins.mpi import MpiPlugin
from volcano_py.jobplugins.pytorch import PytorchPlugin
from volcano_py.jobplugins.ray import RayPlugin
from volcano_py.jobplugins.ssh import KeyPair, SshPlugin, generate_rsa_key_pair
from volcano_py.jobplugins.svc import SvcPlugin
from volcano_py.jobplugins.tensorflow import TensorflowPlugin
from volcano_py.jobplugins.types import (
    JSON,
    JobPlugin,
    JobPluginError,
    JobUpdateHook,
    ManagedObject,
    ObjectRef,
)

Builder = Callable[[Sequence[str]], JobPlugin]

# The order plugins run in, whatever order the Job lists them: hcclrank reads the RANK pytorch sets, and a
# fixed order keeps the pods a Job produces identical from one sync to the next.
PLUGIN_BUILDERS: Mapping[str, Builder] = MappingProxyType(
    {
        "env": EnvPlugin.from_args,
        "svc": SvcPlugin.from_args,
        "ssh": SshPlugin.from_args,
        "mpi": MpiPlugin.from_args,
        "pytorch": PytorchPlugin.from_args,
        "tensorflow": TensorflowPlugin.from_args,
        "ray": RayPlugin.from_args,
        "hcclrank": HcclRankPlugin.from_args,
    }
)
KNOWN_PLUGINS = tuple(PLUGIN_BUILDERS)
# Each plugin's flags (Volcano's flag sets; env takes none).
PLUGIN_FLAGS: Mapping[str, Sequence[Flag]] = MappingProxyType(
    {
        "env": (),
        "svc": svc.FLAGS,
        "ssh": ssh.FLAGS,
        "mpi": mpi.FLAGS,
        "pytorch": pytorch.FLAGS,
        "tensorflow": tensorflow.FLAGS,
        "ray": ray.FLAGS,
        "hcclrank": hcclrank.FLAGS,
    }
)


def plugin_args(job: Mapping[str, Any]) -> dict[str, list[str]]:
    """``spec.plugins`` checked for shape: a map of plugin name to a list of string arguments."""
    raw = job_plugins(job)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise JobPluginError(
            "spec.plugins", "must be a map of plugin name to a list of arguments, e.g. {svc: []}"
        )
    result: dict[str, list[str]] = {}
    for name, args in raw.items():
        if args is None:
            args = []
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise JobPluginError(f"spec.plugins.{name}", 'must be a list of strings, e.g. ["--port=23456"]')
        result[str(name)] = list(args)
    return result


def _build_one(name: str, args: Sequence[str], ssh_keygen: Callable[[], KeyPair]) -> JobPlugin:
    if name == "ssh":
        return SshPlugin.from_args(args, keygen=ssh_keygen)
    builder = PLUGIN_BUILDERS.get(name)
    if builder is None:
        raise JobPluginError(
            f"spec.plugins.{name}",
            f"unknown job plugin {name!r}; known plugins are {', '.join(KNOWN_PLUGINS)}",
        )
    return builder(args)


def _required_tasks(
    job: Mapping[str, Any], plugins: Sequence[JobPlugin], *, mpi: bool = True
) -> list[JobPluginError]:
    problems: list[JobPluginError] = []
    for plugin in plugins:
        if mpi and isinstance(plugin, MpiPlugin) and find_task(job, plugin.master) is None:
            problems.append(
                JobPluginError(
                    "spec.tasks",
                    f"the mpi plugin's master task {plugin.master!r} was not found; "
                    "add a task with that name or pass --master=<task name>",
                )
            )
        if isinstance(plugin, RayPlugin) and find_task(job, plugin.head) is None:
            problems.append(
                JobPluginError(
                    "spec.tasks",
                    f"the ray plugin's head task {plugin.head!r} was not found; "
                    "add a task with that name or pass --head=<task name>",
                )
            )
    return problems


def plugin_problems(job: Mapping[str, Any]) -> list[JobPluginError]:
    """Every problem with the Job's plugins (unknown names, bad arguments, missing tasks), for admission."""
    try:
        specs = plugin_args(job)
    except JobPluginError as exc:
        return [exc]
    problems: list[JobPluginError] = []
    built: list[JobPlugin] = []
    for name in sorted(specs, key=_rank):
        try:
            built.append(_build_one(name, specs[name], generate_rsa_key_pair))
        except JobPluginError as exc:
            problems.append(exc)
    return problems + _required_tasks(job, built)


def argument_problems(job: Mapping[str, Any]) -> list[JobPluginError]:
    """Problems with the arguments of the plugins we know, and tasks they need that ``api.job_rules`` does
    not check (it already reports unknown plugin names and the mpi master task)."""
    try:
        specs = plugin_args(job)
    except JobPluginError as exc:
        return [exc]
    problems: list[JobPluginError] = []
    built: list[JobPlugin] = []
    for name in sorted(specs, key=_rank):
        if name not in PLUGIN_BUILDERS:
            continue
        try:
            built.append(_build_one(name, specs[name], generate_rsa_key_pair))
        except JobPluginError as exc:
            problems.append(exc)
    return problems + _required_tasks(job, built, mpi=False)


def argument_warnings(job: Mapping[str, Any]) -> list[str]:
    """Arguments the Job's plugins will not read (an unknown flag, or no flag, and all after it): admitted,
    as Volcano admits them, with a warning for ``kubectl`` to show. Shape problems: ``argument_problems``."""
    try:
        specs = plugin_args(job)
    except JobPluginError:
        return []
    warnings: list[str] = []
    for name in sorted(specs, key=_rank):
        flags = PLUGIN_FLAGS.get(name)
        if flags is not None:
            try:
                warnings += ignored_arguments(name, flags, specs[name])
            except JobPluginError:
                continue  # a bad value before the unread part: refused by argument_problems
    return warnings


def _rank(name: str) -> tuple[int, str]:
    return (KNOWN_PLUGINS.index(name) if name in PLUGIN_BUILDERS else len(KNOWN_PLUGINS), name)


@dataclass(frozen=True, slots=True)
class PluginSet:
    """The plugins of one Job, in run order; each hook calls every plugin's hook."""

    plugins: tuple[JobPlugin, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(plugin.name for plugin in self.plugins)

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        for plugin in self.plugins:
            plugin.on_pod_create(job, pod, task_name, index)

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return [obj for plugin in self.plugins for obj in plugin.on_job_add(job)]

    def on_job_update(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        """What must follow a Job whose objects exist when its spec changed (scale) or it restarted: only
        the plugins with an update hook are asked, so no ssh key pair is generated to be thrown away."""
        return [
            obj
            for plugin in self.plugins
            if isinstance(plugin, JobUpdateHook)
            for obj in plugin.on_job_update(job)
        ]

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return [ref for plugin in self.plugins for ref in plugin.on_job_delete(job)]

    def controlled_resources(self) -> dict[str, str]:
        """The Job ``status.controlledResources`` entries Volcano records once ``on_job_add`` succeeded."""
        return {f"plugin-{name}": name for name in self.names}


def build_plugins(
    job: Mapping[str, Any], *, ssh_keygen: Callable[[], KeyPair] = generate_rsa_key_pair
) -> PluginSet:
    """Build the Job's plugins from ``spec.plugins``; raise ``JobPluginError`` on the first bad entry.

    Defaults (svc for the frameworks, ssh for mpi) are ``api.job_defaults``'s: the controller builds from a
    Job with them written in, whether or not the webhook wrote them.
    """
    specs = plugin_args(job)
    plugins = tuple(_build_one(name, specs[name], ssh_keygen) for name in sorted(specs, key=_rank))
    problems = _required_tasks(job, plugins)
    if problems:
        raise problems[0]
    return PluginSet(plugins)
