"""The kube-apiserver's audit log, on when a cluster asks for it: which API requests chosen users made.

Used to check RBAC against what the code really calls (``rbac_coverage``): the policy records, at level
Metadata (who, verb, resource; no bodies), only the requests of the user groups asked for, so the other
tests' traffic is neither slowed nor logged. Reading the log is pure: lines in, requests out.

It can also record every pod deletion, by anyone (``pod_deletes``): a Job's restart counts a pod deleted by
someone other than its controller as an eviction, and a test that sees one too many names the deleter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from volcano_py.devcluster.rbac_coverage import Request

POD_DELETES_RULE: dict[str, object] = {
    "level": "Metadata",
    "verbs": ["delete"],
    "resources": [{"group": "", "resources": ["pods"]}],
}


def policy(user_groups: Sequence[str], *, pod_deletes: bool = False) -> str:
    """An audit Policy logging the requests of ``user_groups`` at level Metadata (and with ``pod_deletes``,
    every pod deletion) and nothing else."""
    rules: list[dict[str, object]] = [{"level": "Metadata", "userGroups": list(user_groups)}]
    if pod_deletes:
        rules.append(POD_DELETES_RULE)
    body = {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        # A watch is logged when its response starts (it may never complete while the test runs) and when it
        # ends; RequestReceived adds nothing the other two stages lack.
        "omitStages": ["RequestReceived"],
        "rules": [*rules, {"level": "None"}],
    }
    return yaml.safe_dump(body, sort_keys=False)


def apiserver_flags(policy_file: Path, log_file: Path) -> list[str]:
    return [
        f"--audit-policy-file={policy_file}",
        f"--audit-log-path={log_file}",
        "--audit-log-format=json",
        # Written in the request's path, so a request is in the file by the time its caller has the answer.
        "--audit-log-mode=blocking",
    ]


def requests_by_user(lines: Iterable[str]) -> dict[str, set[Request]]:
    """The resource requests each user made, as RBAC authorizes them, from the log's JSON lines.

    Requests to non-resource URLs (discovery: ``/api``, ``/apis``, ``/version``) carry no object reference;
    every authenticated user may make them (the ``system:discovery`` ClusterRole), so they are left out.
    """
    seen: dict[str, set[Request]] = {}
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        ref = event.get("objectRef")
        if ref is None or "resource" not in ref:
            continue
        verb = str(event["verb"])
        subresource = str(ref.get("subresource") or "")
        name = str(ref.get("name") or "")
        if verb in ("create", "deletecollection") and not subresource:
            # The log fills the name in from the created object; RBAC decides on the collection, nameless.
            name = ""
        request = Request(
            verb=verb,
            api_group=str(ref.get("apiGroup") or ""),
            resource=str(ref["resource"]),
            subresource=subresource,
            namespace=str(ref.get("namespace") or ""),
            name=name,
        )
        seen.setdefault(str(event["user"]["username"]), set()).add(request)
    return seen


def read_from(log_file: Path, offset: int) -> list[str]:
    """The log's lines written after ``offset`` (its size before the run being checked)."""
    with log_file.open("rb") as handle:
        handle.seek(offset)
        return handle.read().decode().splitlines()


def pod_deletions(lines: Iterable[str], namespace: str) -> list[str]:
    """Who deleted which pod of ``namespace``, one line each in the log's order: time, pod, user, agent,
    answer. The log gives no uid: the time places the request among the pod's generations."""
    found = []
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        ref = event.get("objectRef") or {}
        if event.get("verb") != "delete" or ref.get("resource") != "pods" or ref.get("subresource"):
            continue
        if ref.get("namespace") != namespace or event.get("stage") != "ResponseComplete":
            continue
        code = (event.get("responseStatus") or {}).get("code")
        found.append(
            f"{event.get('requestReceivedTimestamp')} delete pod {ref.get('name')} by "
            f"{event['user']['username']} ({event.get('userAgent')}): {code}"
        )
    return found
