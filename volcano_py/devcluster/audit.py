"""The kube-apiserver's audit log, on when a cluster asks for it: which API requests chosen users made.

Used to check RBAC against what the code really calls (``rbac_coverage``): the policy records, at level
Metadata (who, verb, resource; no bodies), only the requests of the user groups asked for, so the other
tests' traffic is neither slowed nor logged. Reading the log is pure: lines in, requests out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from volcano_py.devcluster.rbac_coverage import Request


def policy(user_groups: Sequence[str]) -> str:
    """An audit Policy logging the requests of ``user_groups`` at level Metadata and nothing else."""
    body = {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        # A watch is logged when its response starts (it may never complete while the test runs) and when it
        # ends; RequestReceived adds nothing the other two stages lack.
        "omitStages": ["RequestReceived"],
        "rules": [{"level": "Metadata", "userGroups": list(user_groups)}, {"level": "None"}],
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
