"""RBAC rules against audited requests (``devcluster.rbac_coverage``) and the audit log's reading
(``devcluster.audit``): what the RBAC authorizer would refuse, and what a role grants that nobody used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.devcluster import audit, commands
from volcano_py.devcluster.rbac_coverage import (
    Permission,
    Request,
    bound_permissions,
    coverage,
    grants,
    permissions,
    service_account_user,
)

POD = Request("create", "", "pods", namespace="ns")
BINDING = Request("create", "", "pods", "binding", "ns", "p")
LIST, WATCH, DELETE = (Request(verb, "", "pods") for verb in ("list", "watch", "delete"))
QUEUE_STATUS = Request("patch", "scheduling.volcano.sh", "queues", "status", name="default")
LEASE = Request("update", "coordination.k8s.io", "leases", namespace="volcano-system", name="vc-scheduler")


@pytest.mark.parametrize(
    ("permission", "request_", "granted"),
    [
        pytest.param(Permission("create", "", "pods"), POD, True, id="exact"),
        pytest.param(Permission("delete", "", "pods"), POD, False, id="other-verb"),
        pytest.param(Permission("*", "", "pods"), POD, True, id="any-verb"),
        pytest.param(Permission("create", "apps", "pods"), POD, False, id="other-group"),
        pytest.param(Permission("create", "*", "pods"), POD, True, id="any-group"),
        pytest.param(Permission("create", "", "pods"), BINDING, False, id="resource-is-not-its-subresource"),
        pytest.param(Permission("create", "", "pods/binding"), BINDING, True, id="subresource"),
        pytest.param(Permission("create", "", "*/binding"), BINDING, True, id="subresource-of-any-resource"),
        pytest.param(
            Permission("create", "", "*/binding"), POD, False, id="star-subresource-not-the-resource"
        ),
        pytest.param(Permission("create", "", "*"), BINDING, True, id="any-resource-and-subresource"),
        pytest.param(
            Permission("patch", "scheduling.volcano.sh", "queues/status"),
            QUEUE_STATUS,
            True,
            id="cluster-scoped",
        ),
        pytest.param(
            Permission("update", "coordination.k8s.io", "leases", "vc-scheduler"), LEASE, True, id="named"
        ),
        pytest.param(
            Permission("update", "coordination.k8s.io", "leases", "other"), LEASE, False, id="other-name"
        ),
        pytest.param(
            Permission("create", "coordination.k8s.io", "leases", "vc-scheduler"),
            Request("create", "coordination.k8s.io", "leases", namespace="volcano-system"),
            False,
            id="a-create-has-no-name-to-match",
        ),
        pytest.param(
            Permission("update", "coordination.k8s.io", "leases", namespace="volcano-system"),
            LEASE,
            True,
            id="role-in-its-namespace",
        ),
        pytest.param(
            Permission("create", "", "pods", namespace="volcano-system"), POD, False, id="role-elsewhere"
        ),
        pytest.param(
            Permission("patch", "scheduling.volcano.sh", "queues/status", namespace="ns"),
            QUEUE_STATUS,
            False,
            id="role-never-grants-cluster-scoped",
        ),
    ],
)
def test_a_permission_grants_a_request_as_rbac_does(
    permission: Permission, request_: Request, granted: bool
) -> None:
    assert grants(permission, request_) is granted


RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch", "delete"]},
    {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
]


@pytest.mark.parametrize(
    ("requests", "missing", "unused"),
    [
        pytest.param(
            {LIST, WATCH, Request("delete", "", "pods", namespace="a"), BINDING},
            [],
            [],
            id="exactly-covered",
        ),
        pytest.param(
            {LIST, WATCH, BINDING},
            [],
            ["delete pods"],
            id="a-rule-nobody-used",
        ),
        pytest.param(
            {LIST, WATCH, DELETE, BINDING, POD},
            ["create pods namespace=ns"],
            [],
            id="a-request-no-rule-grants",
        ),
        pytest.param(set(), [], ["create pods/binding", "delete pods", "list pods", "watch pods"], id="idle"),
    ],
)  # fmt: skip
def test_coverage_names_what_is_missing_and_what_is_unused(
    requests: set[Request], missing: list[str], unused: list[str]
) -> None:
    found = coverage(permissions(RULES), requests)
    assert [str(r) for r in found.missing] == missing
    assert [str(p) for p in found.unused] == unused


def test_rules_expand_to_one_permission_per_verb_resource_and_name() -> None:
    rules = [
        {"apiGroups": ["a", "b"], "resources": ["x", "y/s"], "verbs": ["get"], "resourceNames": ["n", "m"]}
    ]
    assert len(permissions(rules)) == 8
    assert Permission("get", "b", "y/s", "m", "ns") in permissions(rules, "ns")
    with pytest.raises(ValueError, match=r"rules\[0\]: nonResourceURLs"):
        permissions([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}])


@pytest.mark.parametrize(
    "text",
    ["delete pods", "create pods/binding", "patch queues.scheduling.volcano.sh/status",
     "get leases.coordination.k8s.io name=vc-scheduler namespace=volcano-system"],
)  # fmt: skip
def test_a_permission_reads_back_what_it_prints(text: str) -> None:
    assert str(Permission.parse(text)) == text


def test_a_permission_with_an_unknown_option_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown option"):
        Permission.parse("get pods names=x")


MANIFESTS = """
kind: ClusterRole
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [nodes], verbs: [list]}]
---
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: sa, namespace: sys}]
---
kind: Role
metadata: {name: lease, namespace: sys}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [update], resourceNames: [me]}]
---
kind: RoleBinding
metadata: {name: lease, namespace: sys}
roleRef: {kind: Role, name: lease}
subjects: [{kind: ServiceAccount, name: sa, namespace: sys}]
---
kind: RoleBinding
metadata: {name: reader-in-team, namespace: team}
roleRef: {kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: sa, namespace: sys}]
---
kind: ClusterRoleBinding
metadata: {name: other}
roleRef: {kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: other, namespace: sys}]
"""


def test_bound_permissions_follow_the_bindings_of_the_account() -> None:
    docs = list(yaml.safe_load_all(MANIFESTS))
    assert bound_permissions(docs, service_account_user("sys", "sa")) == {
        Permission("list", "", "nodes"),
        Permission("update", "coordination.k8s.io", "leases", "me", "sys"),
        # A RoleBinding of a ClusterRole grants its rules in the binding's namespace only.
        Permission("list", "", "nodes", namespace="team"),
    }
    assert bound_permissions(docs, service_account_user("sys", "nobody")) == set()


def test_a_binding_to_a_role_not_given_is_an_error() -> None:
    subject = {"kind": "ServiceAccount", "name": "sa", "namespace": "sys"}
    role = {"kind": "ClusterRole", "name": "x"}
    docs = [{"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": role, "subjects": [subject]}]
    with pytest.raises(ValueError, match="ClusterRole x is not given"):
        bound_permissions(docs, service_account_user("sys", "sa"))
    docs[0]["subjects"] = [{"kind": "Group", "name": "system:serviceaccounts"}]
    with pytest.raises(ValueError, match="a Group subject is not compared"):
        bound_permissions(docs, service_account_user("sys", "sa"))


def _event(user: str, verb: str, **ref: str) -> str:
    return json.dumps({"kind": "Event", "stage": "ResponseComplete", "user": {"username": user}, "verb": verb,
                       **({"objectRef": ref} if ref else {})})  # fmt: skip


def test_the_audit_log_reads_as_requests_per_user() -> None:
    lines = [
        _event("a", "create", resource="pods", namespace="ns", name="p"),  # a create's name: not RBAC's
        _event("a", "create", resource="pods", subresource="binding", namespace="ns", name="p"),
        _event("a", "watch", resource="leases", apiGroup="coordination.k8s.io", namespace="s", name="l"),
        _event("a", "get"),  # a non-resource URL (discovery)
        _event("b", "list", resource="nodes"),
        "",
    ]
    assert audit.requests_by_user(lines) == {
        "a": {
            Request("create", "", "pods", namespace="ns"),
            BINDING,
            Request("watch", "coordination.k8s.io", "leases", namespace="s", name="l"),
        },
        "b": {Request("list", "", "nodes")},
    }


def test_the_audit_log_is_read_from_an_offset(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("before\n")
    offset = log.stat().st_size
    with log.open("a") as handle:
        handle.write("after\n")
    assert audit.read_from(log, offset) == ["after"]


def test_the_audit_policy_logs_only_the_groups_asked_for() -> None:
    policy = yaml.safe_load(audit.policy(["system:serviceaccounts:volcano-system"]))
    assert policy["rules"] == [
        {"level": "Metadata", "userGroups": ["system:serviceaccounts:volcano-system"]},
        {"level": "None"},
    ]


def test_the_audit_policy_can_also_log_every_pod_deletion() -> None:
    policy = yaml.safe_load(audit.policy(["g"], pod_deletes=True))
    assert policy["rules"] == [
        {"level": "Metadata", "userGroups": ["g"]},
        {"level": "Metadata", "verbs": ["delete"], "resources": [{"group": "", "resources": ["pods"]}]},
        {"level": "None"},
    ]


def test_pod_deletions_name_the_deleter_of_each_pod_of_a_namespace() -> None:
    def deletion(name: str, namespace: str, code: int, **extra: str) -> str:
        return json.dumps({
            "stage": "ResponseComplete", "verb": "delete", "user": {"username": "u"}, "userAgent": "agent/1",
            "requestReceivedTimestamp": "2026-12-07T16:20:44.01Z", "responseStatus": {"code": code},
            "objectRef": {"resource": "pods", "namespace": namespace, "name": name, **extra},
        })  # fmt: skip

    lines = [
        deletion("a", "ns", 200),
        deletion("b", "other", 200),
        deletion("c", "ns", 200, subresource="eviction"),
        _event("u", "get", resource="pods", namespace="ns", name="a"),
        deletion("a", "ns", 409),
    ]
    assert audit.pod_deletions(lines, "ns") == [
        "2026-12-07T16:20:44.01Z delete pod a by u (agent/1): 200",
        "2026-12-07T16:20:44.01Z delete pod a by u (agent/1): 409",
    ]


def test_the_apiserver_audits_only_when_asked(tmp_path: Path) -> None:
    layout = commands.RunLayout(tmp_path)
    ports = commands.Ports(etcd_client=2379, etcd_peer=2380, apiserver=6443)
    plain = commands.apiserver_args(Path("/bin/kube-apiserver"), layout, ports)
    assert not any(arg.startswith("--audit") for arg in plain)
    audited = commands.apiserver_args(Path("/bin/kube-apiserver"), layout, ports, audit_log=True)
    assert f"--audit-policy-file={layout.audit_policy}" in audited
    assert f"--audit-log-path={layout.audit_log}" in audited
