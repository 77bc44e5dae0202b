"""Both verdicts on one generated case: ``volcano-py validate``'s, in-process, and a real API server's, from a
dry-run create with strict field validation (what ``kubectl create`` does by default) while our webhooks are
served to it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import yaml

from tests.differential.corpus import JSON, STRICTER, Case
from volcano_py.api.validation import unchecked_reason, validate_object
from volcano_py.cli.validate import check_text, finish
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import ApiError, KubeClient

# kind -> (API path prefix, plural)
RESOURCES: dict[str, tuple[str, str]] = {
    "Job": ("/apis/batch.volcano.sh/v1alpha1", "jobs"),
    "CronJob": ("/apis/batch.volcano.sh/v1alpha1", "cronjobs"),
    "JobTemplate": ("/apis/flow.volcano.sh/v1alpha1", "jobtemplates"),
    "JobFlow": ("/apis/flow.volcano.sh/v1alpha1", "jobflows"),
    "PodGroup": ("/apis/scheduling.volcano.sh/v1beta1", "podgroups"),
    "Queue": ("/apis/scheduling.volcano.sh/v1beta1", "queues"),
    "Command": ("/apis/bus.volcano.sh/v1alpha1", "commands"),
    "HyperNode": ("/apis/topology.volcano.sh/v1alpha1", "hypernodes"),
    "Numatopology": ("/apis/nodeinfo.volcano.sh/v1alpha1", "numatopologies"),
    "Pod": ("/api/v1", "pods"),
    "DeviceClass": ("/apis/resource.k8s.io/v1", "deviceclasses"),
    "ResourceClaim": ("/apis/resource.k8s.io/v1", "resourceclaims"),
    "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1", "resourceclaimtemplates"),
}


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    # The fields the refusal names ([] when accepted, or when the refusal names none we can read).
    fields: tuple[str, ...] = ()
    message: str = ""


@dataclass(frozen=True)
class Outcome:
    case: Case
    sent: JSON
    ours: Verdict
    server: Verdict

    @property
    def verdicts_agree(self) -> bool:
        if self.case.expect == STRICTER:
            return not self.ours.accepted and self.server.accepted
        return self.ours.accepted == self.server.accepted

    @property
    def fields_agree(self) -> bool:
        """Whether a refusal both sides explain names a field in common (a parent of one counts: the server
        names ``spec.tasks`` where we name ``spec.tasks[0]``). True when there is nothing to compare."""
        if self.ours.accepted or self.server.accepted or not self.ours.fields or not self.server.fields:
            return True
        return any(_related(a, b) for a in self.ours.fields for b in self.server.fields)

    def describe(self) -> str:
        ours = "accepted" if self.ours.accepted else f"refused: {self.ours.message}"
        server = "accepted" if self.server.accepted else f"refused: {self.server.message}"
        expected = " (expected: we refuse, the API server accepts)" if self.case.expect == STRICTER else ""
        return (
            f"{self.case.label}{expected}\n  volcano-py validate: {ours}\n  API server: {server}\n"
            f"  manifest: {json.dumps(self.sent, sort_keys=True)}"
        )


def _related(a: str, b: str) -> bool:
    a, b = _normal(a), _normal(b)
    return (
        a == b
        or a.startswith(b + ".")
        or b.startswith(a + ".")
        or a.startswith(b + "[")
        or b.startswith(a + "[")
    )


def _normal(path: str) -> str:
    # The API server names map keys as spec.nodeSelector[key] where we write spec.nodeSelector.key.
    return re.sub(r"\[([^\]0-9][^\]]*)\]", r".\1", path.strip(".")).removeprefix("<nil>").strip(".")


def ours(obj: JSON) -> Verdict:
    """``volcano-py validate`` on one manifest: the whole CLI path (parse, every rule, the checks across
    files), the fields from the rules it applies."""
    assert unchecked_reason(obj) is None, (
        f"the corpus holds a kind validate does not check: {obj.get('kind')}"
    )
    report = finish(check_text(yaml.safe_dump(obj, sort_keys=False), "case.yaml"))
    if not report.problems:
        return Verdict(True)
    fields = tuple(problem.path for problem in validate_object(obj) if problem.path)
    return Verdict(False, fields, " | ".join(line.removeprefix("case.yaml: ") for line in report.problems))


_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
_DENIED = re.compile(r'admission webhook "[^"]+" denied the request: ')


def _path(obj: JSON, namespace: str) -> str:
    prefix, plural = RESOURCES[str(obj["kind"])]
    metadata = obj.get("metadata") or {}
    if "namespace" in metadata:
        return f"{prefix}/namespaces/{namespace}/{plural}"
    return f"{prefix}/{plural}"


async def server(client: KubeClient, obj: JSON, namespace: str) -> Verdict:
    """A dry-run create of ``obj``: nothing is stored, every admission step runs."""
    try:
        await client.request(
            "POST", _path(obj, namespace), query={"dryRun": "All", "fieldValidation": "Strict"}, body=obj
        )
    except ApiError as err:
        if err.status >= 500 or err.status in (401, 404, 409):
            raise  # not a verdict on the object: the cluster or the test is broken
        details = err.body.get("details") or {}
        causes = details.get("causes") or []
        fields = [str(cause["field"]) for cause in causes if cause.get("field")]
        fields += _UNKNOWN_FIELD.findall(err.message)
        if _DENIED.search(err.message):
            fields = []  # our own webhook: its fields are ours, nothing to compare
        return Verdict(False, tuple(dict.fromkeys(fields)), err.message)
    return Verdict(True)


@dataclass
class Tally:
    cases: int = 0
    agreements: int = 0
    field_mismatches: int = 0
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    disagreements: list[Outcome] = field(default_factory=list)
    mismatched_fields: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.cases += 1
        counts = self.by_kind.setdefault(
            outcome.case.kind, {"cases": 0, "agreements": 0, "disagreements": 0, "field_mismatches": 0}
        )
        counts["cases"] += 1
        if not outcome.verdicts_agree:
            counts["disagreements"] += 1
            self.disagreements.append(outcome)
            return
        self.agreements += 1
        counts["agreements"] += 1
        if not outcome.fields_agree:
            self.field_mismatches += 1
            counts["field_mismatches"] += 1
            self.mismatched_fields.append(outcome)


async def judge_all(
    client: KubeClient, cases: Iterable[Case], namespace: str, label_value: str, parallel: int = 8
) -> Tally:
    """Both verdicts on every case, ``parallel`` requests at a time."""
    gate = asyncio.Semaphore(parallel)

    async def one(case: Case) -> Outcome:
        sent = case.placed(namespace, label_value)
        async with gate:
            theirs = await server(client, sent, namespace)
        return Outcome(case, sent, ours(sent), theirs)

    outcomes: Sequence[Outcome] = await asyncio.gather(*(one(case) for case in cases))
    tally = Tally()
    for outcome in outcomes:
        tally.add(outcome)
    return tally


def open_default_queue(cluster: DevCluster) -> None:
    """Queue ``default``, Open: the corpus's Jobs and PodGroups go there, and admission refuses them unless it
    is Open (on a control plane without Volcano's controllers nothing opens it)."""
    if cluster.kubectl("get", "queue", "default", check=False).returncode != 0:
        manifest = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "default"},
        }
        cluster.kubectl("create", "-f", "-", input=json.dumps(manifest))
    patch = json.dumps({"status": {"state": "Open"}})
    cluster.kubectl("patch", "queue", "default", "--subresource=status", "--type=merge", "-p", patch)
