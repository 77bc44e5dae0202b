"""``DevCluster``: start, use and stop one local control plane (etcd, kube-apiserver, KCM, kube-scheduler,
kwok).

Synchronous on purpose: it is driven from pytest fixtures, the CLI and benchmarks, none of which should need
an event loop to get a cluster. Talk to the cluster with anything that reads ``.kubeconfig``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from volcano_py.devcluster import audit, commands, credentials, processes, rest, stages
from volcano_py.devcluster.build import ensure_binaries
from volcano_py.devcluster.errors import ClusterError, KubectlError
from volcano_py.devcluster.objects import ClusterObjects
from volcano_py.devcluster.ports import free_ports
from volcano_py.devcluster.versions import kwok_stage_dir
from volcano_py.log import get_logger

log = get_logger(__name__)

PORT_ATTEMPTS = 3
# The five processes, in start order (stopping goes the other way).
COMPONENTS: tuple[str, ...] = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
# How long a restarted client (KCM, kube-scheduler, kwok) must stay up to count as started: none serves a
# health endpoint here, and a bad start (a flag, a lost kubeconfig) makes them exit within a second.
CLIENT_SETTLE_SECONDS = 1.0


class DevCluster(ClusterObjects):
    """One local control plane. ``with DevCluster() as cluster: ...`` or ``start()`` / ``stop()``.

    ``run_dir`` holds its state (etcd data, PKI, kubeconfig, logs, state.json); by default a fresh temporary
    directory that ``stop()`` removes. ``die_with_parent`` makes Linux kill the children if the thread that
    started them exits -- keep it on unless that thread is short-lived. ``audit_user_groups``: the API server
    logs the requests of users in these groups (level Metadata) to ``audit_log``; nobody else's, except every
    pod deletion with ``audit_pod_deletes``.
    """

    def __init__(
        self,
        run_dir: Path | None = None,
        *,
        cache: Path | None = None,
        die_with_parent: bool = True,
        startup_timeout: float = 120.0,
        out: TextIO | None = None,
        audit_user_groups: Sequence[str] = (),
        audit_pod_deletes: bool = False,
    ) -> None:
        self._owns_run_dir = run_dir is None
        self.layout = commands.RunLayout(
            Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="volcano-py-dev-"))
        )
        self._cache = cache
        self._die_with_parent = die_with_parent
        self._startup_timeout = startup_timeout
        self._out = out
        self._audit_user_groups = tuple(audit_user_groups)
        self._audit_pod_deletes = audit_pod_deletes
        self._children: list[processes.Child] = []
        # argv and environment of each child, to start it again in place (``restart``).
        self._commands: dict[str, tuple[list[str], dict[str, str] | None]] = {}
        self._starter = threading.get_ident()
        self._token = ""
        self._ports: commands.Ports | None = None
        self._binaries: dict[str, Path] = {}
        self._rest: rest.AdminApi | None = None

    # -- what users read -------------------------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        return self.layout.kubeconfig

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with KUBECONFIG pointing at the cluster, for subprocesses."""
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig)}

    @property
    def server(self) -> str:
        if self._ports is None:
            raise ClusterError("the cluster is not started; call start() first")
        return self._ports.server

    @property
    def kubectl_binary(self) -> Path:
        """Our pinned kubectl, for callers that run it themselves (``.kubectl()`` is usually simpler)."""
        if not self._binaries:
            raise ClusterError("the cluster is not started; call start() first")
        return self._binaries["kubectl"]

    @property
    def audit_log(self) -> Path:
        """The API server's audit log (JSON lines); ClusterError unless started with ``audit_user_groups``."""
        if not self._audit_user_groups:
            raise ClusterError("no audit log: build the DevCluster with audit_user_groups=(...)")
        return self.layout.audit_log

    @property
    def token(self) -> str:
        return self._token

    @property
    def running(self) -> bool:
        return bool(self._children) and all(child.process.poll() is None for child in self._children)

    # -- lifecycle -------------------------------------------------------------------------------------------

    def __enter__(self) -> DevCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> DevCluster:
        """Build what is missing, start all five processes and return once the API serves and KCM works."""
        if self._children:
            raise ClusterError("the cluster is already started")
        began = time.monotonic()
        self._starter = threading.get_ident()
        self._binaries = ensure_binaries(self._cache, out=self._out)
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self._prepare_run_dir()
            try:
                self._launch()
                break
            except ClusterError as err:
                processes.stop_children(self._children)
                self._children = []
                # Free ports are picked, then bound by the child: another cluster starting at the same
                # moment can win that race. Start over on fresh ports rather than fail the session.
                if attempt < PORT_ATTEMPTS and "address already in use" in str(err):
                    log.warning("devcluster.port-taken", attempt=attempt)
                    continue
                self.stop()
                raise
            except BaseException:
                self.stop()
                raise
        log.info("devcluster.ready", server=self.server, seconds=round(time.monotonic() - began, 1))
        return self

    def stop(self) -> None:
        """Stop every child (in reverse start order, etcd last) and wait until none is left."""
        processes.stop_children(self._children)
        self._children = []
        (self.layout.root / processes.STATE_FILE).unlink(missing_ok=True)
        if self._owns_run_dir:
            shutil.rmtree(self.layout.root, ignore_errors=True)

    def _prepare_run_dir(self) -> None:
        root = self.layout.root
        state = processes.ClusterState.read(root) if root.exists() else None
        if state and any(processes.is_same_process(child) for child in state.children):
            raise ClusterError(f"a cluster from {root} is still running; stop it with `volcano-py dev down`")
        for stale in (self.layout.etcd_data, self.layout.pki, self.layout.kwok_home, self.layout.logs):
            shutil.rmtree(stale, ignore_errors=True)
        for path in (self.layout.pki, self.layout.kwok_home, self.layout.logs):
            path.mkdir(parents=True)
        self._token = credentials.new_token()
        self.layout.token_file.write_text(credentials.token_file_line(self._token))
        self.layout.service_account_key.write_bytes(credentials.service_account_key_pem())
        os.chmod(self.layout.service_account_key, 0o600)
        stage_texts = [path.read_text() for path in sorted(kwok_stage_dir(self._cache_root()).glob("*.yaml"))]
        self.layout.kwok_config.write_text(stages.kwok_config(stage_texts))
        if self._audit_user_groups:
            self.layout.audit_policy.write_text(
                audit.policy(self._audit_user_groups, pod_deletes=self._audit_pod_deletes)
            )

    def _cache_root(self) -> Path:
        # The kwok binary sits in <cache>/bin/kwok-<version>/; its stages directory is beside it.
        return self._binaries["kwok"].parent.parent.parent

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        child = processes.spawn(name, argv, self.layout.logs, env=env, die_with_parent=self._die_with_parent)
        self._commands[name] = (argv, env)
        self._children.append(child)

    # -- one component at a time -----------------------------------------------------------------------------

    def pid(self, component: str) -> int:
        """The pid (and process group) of one running component."""
        return self._child(component).process.pid

    def _child(self, component: str) -> processes.Child:
        for child in self._children:
            if child.name == component:
                return child
        if component not in COMPONENTS:
            raise ValueError(f"component {component!r} is not one of {', '.join(COMPONENTS)}")
        raise ClusterError("the cluster is not started; call start() first")

    def restart(
        self, component: str, *, down_seconds: float = 0.0, hard: bool = False, timeout: float = 60.0
    ) -> float:
        """Stop one component and start it again in place, with the same flags, ports, data and certificates.

        The others keep running: clients see the API (or etcd behind it) gone for a while and must recover by
        themselves. ``hard`` kills with SIGKILL (a crash) instead of SIGTERM (a rolling restart);
        ``down_seconds`` keeps the component stopped that long before starting it again. Returns once it
        serves again (etcd /health, apiserver /readyz; KCM, kube-scheduler and kwok once they stay up), with
        the seconds it was gone. ClusterError, with its log's last lines, when it does not come back.
        """
        child = self._child(component)
        if self._die_with_parent and threading.get_ident() != self._starter:
            # Linux's parent-death signal follows the thread that spawned: a child started from a short-lived
            # worker thread would be killed when that thread ends.
            raise ClusterError(
                "restart() must run on the thread that called start() (or build the DevCluster with "
                "die_with_parent=False)"
            )
        index = self._children.index(child)
        argv, env = self._commands[component]
        stopped = time.monotonic()
        if hard:
            processes.kill_group(child.process.pid, reap=child.process.poll)
        else:
            processes.stop_group(child.process.pid, reap=child.process.poll)
        try:
            child.process.wait(timeout=10)
        except subprocess.TimeoutExpired as err:
            raise ClusterError(f"{component} (pid {child.process.pid}) did not exit when stopped") from err
        if down_seconds > 0:
            time.sleep(down_seconds)
        if component == "kwok":
            # The node leases name the old kwok as holder; a new one waits for them to expire (the lease
            # duration, 40 s) before it runs the nodes' pods again. Nobody holds them now: let them go.
            self.kubectl("delete", "leases", "--all", "-n", "kube-node-lease", "--wait=false")
        log.info("devcluster.restart", component=component, hard=hard, down_seconds=down_seconds)
        self._children[index] = processes.spawn(
            component, argv, self.layout.logs, env=env, die_with_parent=self._die_with_parent
        )
        deadline = time.monotonic() + timeout
        ports = self._ports
        assert ports is not None  # a started cluster has ports
        if component == "etcd":
            self._wait(
                "etcd /health after a restart", deadline, lambda: rest.http_ok(f"{ports.etcd_url}/health")
            )
        elif component == "kube-apiserver":
            self._wait(
                "kube-apiserver /readyz after a restart", deadline, lambda: self._get("/readyz") is not None
            )
        else:
            settled = time.monotonic() + CLIENT_SETTLE_SECONDS
            self._wait(
                f"{component} to stay up after a restart", deadline, lambda: time.monotonic() > settled
            )
        self._write_state()
        return time.monotonic() - stopped

    def _launch(self) -> None:
        # New ports, token and serving certificate on every launch: forget the client made for the last one.
        self._rest = None
        etcd_client, etcd_peer, apiserver = free_ports(3)
        ports = self._ports = commands.Ports(
            etcd_client=etcd_client, etcd_peer=etcd_peer, apiserver=apiserver
        )
        deadline = time.monotonic() + self._startup_timeout
        self._spawn("etcd", commands.etcd_args(self._binaries["etcd"], self.layout, ports))
        self._wait("etcd /health", deadline, lambda: rest.http_ok(f"{ports.etcd_url}/health"))
        self._spawn(
            "kube-apiserver",
            commands.apiserver_args(
                self._binaries["kube-apiserver"], self.layout, ports, audit_log=bool(self._audit_user_groups)
            ),
        )
        self._wait("kube-apiserver serving certificate", deadline, self.layout.serving_cert.exists)
        self._wait("kube-apiserver /readyz", deadline, lambda: self._get("/readyz") is not None)
        self.layout.kubeconfig.write_text(
            credentials.kubeconfig(ports.server, self._token, self.layout.serving_cert)
        )
        self._spawn(
            "kube-controller-manager",
            commands.controller_manager_args(self._binaries["kube-controller-manager"], self.layout),
        )
        self._spawn("kube-scheduler", commands.scheduler_args(self._binaries["kube-scheduler"], self.layout))
        kwok_env = {**os.environ, "KWOK_WORKDIR": str(self.layout.kwok_home)}
        self._spawn("kwok", commands.kwok_args(self._binaries["kwok"], self.layout), env=kwok_env)
        # The default ServiceAccount appears only once KCM's controllers run: proof that KCM works.
        self._wait(
            "kube-controller-manager (default ServiceAccount)",
            deadline,
            lambda: self._has_default_sa("default"),
        )
        self._write_state()

    def _write_state(self) -> None:
        processes.ClusterState(
            supervisor_pid=os.getpid(),
            supervisor_argv0=(processes.cmdline(os.getpid()) or [""])[0],
            kubeconfig=str(self.kubeconfig),
            children=tuple(child.record() for child in self._children),
        ).write(self.layout.root)

    def _wait(self, what: str, deadline: float, ready: Callable[[], bool]) -> None:
        while True:
            for child in self._children:
                if child.process.poll() is not None:
                    raise ClusterError(
                        f"{child.name} exited with code {child.process.returncode} while waiting for {what}; "
                        f"last lines of {child.log}:\n{child.log_tail()}"
                    )
            if ready():
                return
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- {c.name} ({c.log}):\n{c.log_tail(10)}" for c in self._children)
                raise ClusterError(
                    f"timed out after {self._startup_timeout:.0f}s waiting for {what}\n{tails}"
                )
            time.sleep(0.2)

    # -- talking to the API ----------------------------------------------------------------------------------

    def _api(self) -> rest.AdminApi:
        if self._rest is None:
            self._rest = rest.AdminApi(self.server, self._token, self.layout.serving_cert)
        return self._rest

    def _get(self, path: str) -> Any | None:
        return self._api().get(path)

    def get_json(self, path: str) -> Any:
        """GET an API path (e.g. ``/api/v1/nodes``) and decode it; ClusterError if that fails."""
        return self._api().get_json(path)

    def post_json(self, path: str, body: Any) -> Any:
        """POST an object (e.g. a Binding to ``.../pods/<name>/binding``); errors carry the API's reason."""
        return self._api().post_json(path, body)

    def _is_served(self, path: str) -> bool:
        return self._get(path) is not None

    def _has_default_sa(self, namespace: str) -> bool:
        return self._get(f"/api/v1/namespaces/{namespace}/serviceaccounts/default") is not None

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        """Run our pinned kubectl on this cluster; with ``check``, failing raises KubectlError with stderr."""
        argv = [str(self.kubectl_binary), f"--kubeconfig={self.kubeconfig}", *args]
        done = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise KubectlError(done.returncode, argv, done.stdout, done.stderr)
        return done

    def wait_for(
        self, what: str, ready: Callable[[], bool], timeout: float = 60.0, *, interval: float = 0.2
    ) -> None:
        """Poll ``ready`` every ``interval`` seconds until it holds; ClusterError naming ``what`` if not."""
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(interval)

    def wait_for_default_service_account(self, namespace: str, timeout: float = 60.0) -> None:
        """Pods cannot be created in a new namespace until KCM has made its ``default`` ServiceAccount."""
        self.wait_for(
            f"ServiceAccount default in {namespace}", lambda: self._has_default_sa(namespace), timeout
        )
