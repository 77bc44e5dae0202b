"""``volcano-py validate`` against Volcano's own admission on the generated corpus; JSON on stdout.

The corpus of ``tests/differential/corpus.py``, restricted to Volcano's kinds (batch Job and CronJob, flow
JobFlow and JobTemplate, scheduling PodGroup and Queue, bus Command, topology HyperNode, and Pods, which
Volcano's pod webhooks see; each Pod not for Volcano's scheduler is judged once more with ``schedulerName:
volcano``, as those webhooks read only such Pods), judged twice: by ``volcano-py validate`` in-process (the
function the differential test uses), and by a dry-run create (strict field validation) on a control plane of
its own whose only admission webhooks are Volcano's webhook-manager, built from a Volcano source tree. The
webhook configurations are those of Volcano's Helm chart (``helm template`` of
``installer/helm/chart/volcano`` in that tree, every admission enabled), pointed at
``https://127.0.0.1:<port>/<path>`` with a self-signed certificate; the webhook-manager adds nothing to them
but the CA bundle it is given. Queue ``default`` exists and is Open, as Volcano's controllers would leave it.
``--crds volcano`` serves the chart's CRDs instead of ours; ``--vap`` adds the chart's
ValidatingAdmissionPolicies (off in the chart by default).

Agreement is judged as the corpus expects (a ``stricter`` case agrees when we refuse and Volcano accepts);
``same_verdict`` counts the cases where both accept or both refuse. The webhook-manager is built by
``build_volcano.py`` into the same cache as Volcano's scheduler. Progress goes to stderr; the JSON summary
(agreement per kind, every disagreement with both messages and the manifest) to stdout. Every process started
here is stopped before it exits. Exits 1 on any disagreement.

Usage: python -m benchmarks.volcano_admission_differential --volcano-src /path/to/volcano [--cases 606]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import datetime
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.build_volcano import ensure_volcano
from tests.differential import corpus
from tests.differential.judge import Outcome, Tally, Verdict, open_default_queue, ours, server
from volcano_py import log
from volcano_py.devcluster import DevCluster
from volcano_py.devcluster.build import ensure_tools
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.webhooks.tls import generate_certificate

REPO = Path(__file__).resolve().parents[1]

# The corpus's kinds that are Volcano's, or that Volcano's webhooks see (Pods).
VOLCANO_KINDS = (
    "Job",
    "CronJob",
    "JobFlow",
    "JobTemplate",
    "PodGroup",
    "Queue",
    "Command",
    "HyperNode",
    "Pod",
)
# Every admission Volcano's webhook-manager registers (its chart enables a subset by default).
ADMISSIONS = (
    "/jobs/mutate",
    "/jobs/validate",
    "/podgroups/mutate",
    "/podgroups/validate",
    "/pods/mutate",
    "/pods/validate",
    "/queues/mutate",
    "/queues/validate",
    "/hypernodes/validate",
    "/cronjobs/validate",
    "/jobflows/validate",
)
CHART = Path("installer/helm/chart/volcano")
READY_TIMEOUT = 120.0


def progress(message: str) -> None:
    print(f"[volcano_admission_differential] {message}", file=sys.stderr, flush=True)


# -- the cases -----------------------------------------------------------------------------------------------


def on_volcano(cases: list[corpus.Case]) -> list[corpus.Case]:
    """Each Pod case not for Volcano's scheduler once more with ``schedulerName: volcano``: Volcano's pod
    webhooks pass other Pods through unread (the mutation that sets a free-form scheduler name excepted)."""
    more = []
    for case in cases:
        spec = case.obj.get("spec") or {}
        if case.kind != "Pod" or case.mutation == "scheduler-name-free-form":
            continue
        if spec.get("schedulerName") != "volcano":
            obj = {**case.obj, "spec": {**spec, "schedulerName": "volcano"}}
            more.append(dataclasses.replace(case, obj=obj))
    return cases + more


def kind_key(case: corpus.Case) -> str:
    """Pods split by scheduler: Volcano's pod webhooks act on Pods of its scheduler only."""
    if case.kind != "Pod":
        return case.kind
    scheduler = (case.obj.get("spec") or {}).get("schedulerName")
    return "Pod[volcano]" if scheduler == "volcano" else "Pod[other scheduler]"


def crd_paths(which: str, src: Path) -> list[Path]:
    if which == "ours":
        return [REPO / "crds"]
    # Volcano's chart keeps the flow CRDs in its jobflow subchart.
    return [src / CHART / "crd" / "bases", src / CHART / "charts" / "jobflow" / "crd" / "bases"]


# -- Volcano's webhook-manager -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def render_chart(src: Path, template: str, *values: str) -> list[dict[str, Any]]:
    """The objects of one template of Volcano's chart, ``helm template`` with ``values`` (``key=value``)."""
    helm = ensure_tools(out=sys.stderr)["helm"]
    command = [str(helm), "template", "volcano", str(src / CHART), "--namespace", "volcano-system"]
    command += ["--show-only", f"templates/{template}"]
    for value in values:
        command += ["--set", value]
    rendered = subprocess.run(command, check=True, capture_output=True, text=True)
    return [doc for doc in yaml.safe_load_all(rendered.stdout) if doc]


def webhook_configurations(src: Path, base_url: str, ca_pem: bytes) -> list[dict[str, Any]]:
    """Volcano's chart's webhook configurations, every admission enabled, served at ``base_url``."""
    documents = render_chart(src, "webhooks.yaml", "custom.enabled_admissions=" + "\\,".join(ADMISSIONS))
    bundle = base64.b64encode(ca_pem).decode()
    for document in documents:
        for webhook in document["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"{base_url}{path}", "caBundle": bundle}
    served = {
        webhook["clientConfig"]["url"].removeprefix(base_url) for d in documents for webhook in d["webhooks"]
    }
    if served != set(ADMISSIONS):
        raise SystemExit(f"the chart's webhooks serve {sorted(served)}, not {sorted(ADMISSIONS)}")
    return documents


@dataclass
class WebhookManager:
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def webhook_manager(binary: Path, cluster: DevCluster, certs: Path, port: int) -> Iterator[WebhookManager]:
    """Volcano's webhook-manager on 127.0.0.1:``port``; stopped (SIGTERM, then SIGKILL) after the block."""
    log = certs.parent / "vc-webhook-manager.log"
    argv = [
        str(binary),
        f"--kubeconfig={cluster.kubeconfig}",
        f"--tls-cert-file={certs / 'tls.crt'}",
        f"--tls-private-key-file={certs / 'tls.key'}",
        f"--ca-cert-file={certs / 'ca.crt'}",
        "--listen-address=127.0.0.1",
        f"--port={port}",
        f"--webhook-url=https://127.0.0.1:{port}",
        f"--enabled-admission={','.join(ADMISSIONS)}",
        "--graceful-shutdown-time=2s",
        "-v=2",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    progress(f"vc-webhook-manager pid {process.pid} on 127.0.0.1:{port} (log: {log})")
    try:
        yield WebhookManager(process, log)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
        progress(f"vc-webhook-manager stopped (exit {process.returncode})")


# A Job whose minAvailable exceeds its replicas: the CRD schema takes it, Volcano's job webhook refuses it.
PROBE_JOB: dict[str, Any] = {
    "apiVersion": corpus.BATCH,
    "kind": "Job",
    "metadata": {"name": "dc-probe"},
    "spec": {
        "queue": "default",
        "minAvailable": 5,
        "tasks": [
            {
                "name": "t",
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            }
        ],
    },
}


WEBHOOK_DENIED = 'admission webhook "validatejob.volcano.sh" denied'
# The job policy refuses the probe too, and runs before the webhooks: once it does, the policies are in force.
VAP_DENIED = "ValidatingAdmissionPolicy 'job-validation-policy'"


async def wait_ready(client: KubeClient, manager: WebhookManager, namespace: str, denied_by: str) -> str:
    """Until the API server refuses the probe Job with a message holding ``denied_by``; that message."""
    deadline = time.monotonic() + READY_TIMEOUT
    last = ""
    while time.monotonic() < deadline:
        if manager.process.poll() is not None:
            raise SystemExit(
                f"vc-webhook-manager exited with {manager.process.returncode}:\n{manager.tail()}"
            )
        try:
            await client.request(
                "POST",
                f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs",
                query={"dryRun": "All"},
                body={**PROBE_JOB, "metadata": {"name": "dc-probe", "namespace": namespace}},
            )
        except ApiError as err:
            if denied_by in err.message:
                return err.message
            last = err.message
        else:
            last = "the probe Job was accepted"
        await asyncio.sleep(1.0)
    raise SystemExit(
        f"Volcano's webhooks did not answer within {READY_TIMEOUT:.0f}s ({last}):\n{manager.tail()}"
    )


# -- judging -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failed:
    """A request that got no verdict on the object (a 5xx, the webhook unreachable)."""

    case: corpus.Case
    sent: dict[str, Any]
    error: str


async def judge(
    client: KubeClient, cases: list[corpus.Case], namespace: str, run: str, parallel: int
) -> list[Outcome | Failed]:
    gate = asyncio.Semaphore(parallel)
    done = 0

    async def one(case: corpus.Case) -> Outcome | Failed:
        nonlocal done
        sent = case.placed(namespace, run)
        async with gate:
            try:
                theirs: Verdict = await server(client, sent, namespace)
            except ApiError as err:
                return Failed(case, sent, f"HTTP {err.status} {err.reason}: {err.message}")
            finally:
                done += 1
                if done % 50 == 0:
                    progress(f"{done}/{len(cases)} cases sent")
        return Outcome(case, sent, ours(sent), theirs)

    return list(await asyncio.gather(*(one(case) for case in cases)))


def message(verdict: Verdict) -> str:
    return "accepted" if verdict.accepted else f"refused: {verdict.message}"


def summarize(results: list[Outcome | Failed]) -> dict[str, Any]:
    by_kind: dict[str, dict[str, Any]] = {}
    for result in results:
        counts = by_kind.setdefault(
            kind_key(result.case),
            {
                "cases": 0,
                "agreements": 0,
                "same_verdict": 0,
                "disagreements": 0,
                "field_mismatches": 0,
                "errors": 0,
            },
        )
        counts["cases"] += 1
        if isinstance(result, Failed):
            counts["errors"] += 1
            continue
        counts["same_verdict"] += result.ours.accepted == result.server.accepted
        if result.verdicts_agree:
            counts["agreements"] += 1
            counts["field_mismatches"] += not result.fields_agree
        else:
            counts["disagreements"] += 1
    for counts in by_kind.values():
        judged = counts["cases"] - counts["errors"]
        counts["agreement_rate"] = round(counts["agreements"] / judged, 3) if judged else None
    return dict(sorted(by_kind.items()))


def describe(outcome: Outcome) -> dict[str, Any]:
    return {
        "case": outcome.case.label,
        "area": outcome.case.area,
        "expect": outcome.case.expect,
        "volcano_py": message(outcome.ours),
        "volcano": message(outcome.server),
        "manifest": outcome.sent,
    }


# -- main ----------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--volcano-src", type=Path, required=True, help="a Volcano source tree")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--crds",
        choices=("ours", "volcano"),
        default="ours",
        help="serve our CRDs (crds/) or those of Volcano's chart (its crd/bases and the jobflow subchart's)",
    )
    parser.add_argument(
        "--vap",
        action="store_true",
        help="also apply the chart's ValidatingAdmissionPolicies (its custom.vap_enable, off by default)",
    )
    parser.add_argument("--parallel", type=int, default=8, help="requests in flight")
    parser.add_argument(
        "--pods-as-drawn",
        action="store_true",
        help="judge Pods only as drawn, not also each once more with schedulerName volcano",
    )
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N disagreements on stderr")
    args = parser.parse_args()
    log.configure("warning", json=True)  # logs to stderr: stdout carries only the JSON result
    # A SIGTERM unwinds like Ctrl-C, so the webhook-manager and the control plane are stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    src = args.volcano_src.resolve()
    binary = ensure_volcano(src, ("vc-webhook-manager",)) / "vc-webhook-manager"
    started = time.monotonic()
    cases = corpus.sample(args.cases, seed=args.seed, kinds=VOLCANO_KINDS)
    if not args.pods_as_drawn:
        cases = on_volcano(cases)
    generated = time.monotonic()
    progress(
        f"{len(cases)} cases drawn in {generated - started:.1f}s: {dict(Counter(kind_key(c) for c in cases))}"
    )
    run = uuid.uuid4().hex[:6]
    with tempfile.TemporaryDirectory(prefix="volcano-admission-differential-") as tmp:
        certs = Path(tmp) / "certs"
        certs.mkdir()
        cert = generate_certificate(["127.0.0.1"], now=datetime.datetime.now(tz=datetime.UTC))
        for name, content in {
            "ca.crt": cert.ca_pem,
            "tls.crt": cert.cert_pem,
            "tls.key": cert.key_pem,
        }.items():
            (certs / name).write_bytes(content)
            (certs / name).chmod(0o600)
        port = free_port()
        configurations = webhook_configurations(src, f"https://127.0.0.1:{port}", cert.ca_pem)
        if args.vap:
            configurations += render_chart(src, "validating_admission_policy.yaml", "custom.vap_enable=true")
        cluster = DevCluster(Path(tmp) / "cluster", out=sys.stderr)
        cluster.start()
        try:
            for crds in crd_paths(args.crds, src):
                cluster.apply_crds(crds)
            open_default_queue(cluster)  # before the webhooks: Volcano's controllers would have made it
            namespace = cluster.create_namespace()
            cluster.kubectl(
                "create",
                "-f",
                "-",
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": configurations}),
            )
            with webhook_manager(binary, cluster, certs, port) as manager:
                judging, judged, results, probe = asyncio.run(
                    _judge_all(cluster, manager, cases, namespace, run, args.parallel, args.vap)
                )
        finally:
            cluster.stop()

    tally = Tally()
    for result in results:
        if isinstance(result, Outcome):
            tally.add(result)
    failed = [result for result in results if isinstance(result, Failed)]
    for outcome in tally.disagreements[: args.show]:
        print(outcome.describe(), file=sys.stderr)
    summary = {
        "cases": len(results),
        "seed": args.seed,
        "crds": args.crds,
        "validating_admission_policies": args.vap,
        "webhook_manager": str(binary),
        "admissions": list(ADMISSIONS),
        "probe": probe,
        "agreements": tally.agreements,
        "same_verdict": sum(
            1 for r in results if isinstance(r, Outcome) and r.ours.accepted == r.server.accepted
        ),
        "disagreements": len(tally.disagreements),
        "field_mismatches": tally.field_mismatches,
        "errors": len(failed),
        "by_kind": summarize(results),
        "disagreements_by_case": dict(Counter(o.case.label for o in tally.disagreements).most_common()),
        "disagreement_details": [describe(o) for o in tally.disagreements],
        "field_mismatch_details": [describe(o) for o in tally.mismatched_fields],
        "error_details": [{"case": f.case.label, "error": f.error, "manifest": f.sent} for f in failed],
        "generate_s": round(generated - started, 1),
        "judge_s": round(judged - judging, 1),
    }
    print(json.dumps(summary, indent=2))
    return 1 if tally.disagreements or failed else 0


async def _judge_all(
    cluster: DevCluster,
    manager: WebhookManager,
    cases: list[corpus.Case],
    namespace: str,
    run: str,
    parallel: int,
    vap: bool,
) -> tuple[float, float, list[Outcome | Failed], str]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    try:
        probe = await wait_ready(client, manager, namespace, VAP_DENIED if vap else WEBHOOK_DENIED)
        progress(f"Volcano's webhooks answer: {probe}")
        judging = time.monotonic()
        results = await judge(client, cases, namespace, run, parallel)
        return judging, time.monotonic(), results, probe
    finally:
        await client.close()


if __name__ == "__main__":
    sys.exit(main())
