"""RBAC rules against the requests a process made: what was refused (missing) and what was never used.

Pure: a ServiceAccount's permissions are read from the manifests that bind them (ClusterRoles, Roles and their
bindings), split into one ``Permission`` per verb, resource and name, and matched against the ``Request``s
of the audit log the way the RBAC authorizer matches (wildcards, ``*/subresource``, ``resourceNames``, a Role
only in its namespace).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.objects import name_of, namespace_of

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL = "*"


def _ref(api_group: str, resource: str) -> str:
    """``resource[.group][/subresource]``, as ``kubectl auth can-i`` names it (``pods/binding``)."""
    plural, _, subresource = resource.partition("/")
    dotted = f"{plural}.{api_group}" if api_group else plural
    return f"{dotted}/{subresource}" if subresource else dotted


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """One API request as the authorizer sees it (a create's name is not part of it)."""

    verb: str
    api_group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def combined_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def __str__(self) -> str:
        text = f"{self.verb} {_ref(self.api_group, self.combined_resource)}"
        if self.name:
            text += f" name={self.name}"
        if self.namespace:
            text += f" namespace={self.namespace}"
        return text


@dataclass(frozen=True, slots=True, order=True)
class Permission:
    """One verb on one resource (and one name, when the rule lists ``resourceNames``) a role grants.

    ``namespace`` is empty for a ClusterRole bound cluster-wide, else the only namespace it holds in.
    """

    verb: str
    api_group: str
    resource: str
    name: str = ""
    namespace: str = ""

    def __str__(self) -> str:
        text = f"{self.verb} {_ref(self.api_group, self.resource)}"
        if self.name:
            text += f" name={self.name}"
        if self.namespace:
            text += f" namespace={self.namespace}"
        return text

    @classmethod
    def parse(cls, text: str) -> Permission:
        """The inverse of ``str``: ``patch queues.scheduling.volcano.sh/status``,
        ``get leases.coordination.k8s.io name=vc-scheduler namespace=volcano-system``."""
        verb, ref, *options = text.split()
        dotted, _, subresource = ref.partition("/")
        plural, _, api_group = dotted.partition(".")
        fields = dict(option.split("=", 1) for option in options)
        unknown = set(fields) - {"name", "namespace"}
        if unknown:
            raise ValueError(f"{text!r}: unknown option(s) {sorted(unknown)}; only name= and namespace=")
        resource = f"{plural}/{subresource}" if subresource else plural
        return cls(verb, api_group, resource, fields.get("name", ""), fields.get("namespace", ""))


def _resource_matches(rule_resource: str, request: Request) -> bool:
    # As the RBAC authorizer: "*" is every resource and subresource, "*/status" a subresource of any resource;
    # "pods" alone never grants a subresource of pods.
    if rule_resource in (ALL, request.combined_resource):
        return True
    return bool(request.subresource) and rule_resource == f"*/{request.subresource}"


def grants(permission: Permission, request: Request) -> bool:
    if permission.verb not in (ALL, request.verb):
        return False
    if permission.api_group not in (ALL, request.api_group):
        return False
    if not _resource_matches(permission.resource, request):
        return False
    if permission.name and permission.name != request.name:
        return False
    return not permission.namespace or permission.namespace == request.namespace


def permissions(rules: Sequence[Mapping[str, Any]], namespace: str = "") -> set[Permission]:
    """Every (verb, group, resource, name) the rules grant; rules naming non-resource URLs are refused."""
    granted: set[Permission] = set()
    for index, rule in enumerate(rules):
        if rule.get("nonResourceURLs"):
            raise ValueError(f"rules[{index}]: nonResourceURLs are not compared (no process here calls any)")
        names = list(rule.get("resourceNames") or []) or [""]
        for verb in rule["verbs"]:
            for api_group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for name in names:
                        granted.add(Permission(verb, api_group, resource, name, namespace))
    return granted


def service_account_user(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def _binds(binding: Mapping[str, Any], user: str) -> bool:
    for subject in binding.get("subjects") or []:
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            if service_account_user(subject.get("namespace", ""), subject["name"]) == user:
                return True
        elif kind == "User":
            if subject.get("name") == user:
                return True
        else:
            # A group's members are not known from manifests: its grants cannot be attributed to a user.
            where = f"{binding['kind']} {name_of(binding)}"
            raise ValueError(f"{where}: a {kind} subject is not compared")
    return False


def bound_permissions(manifests: Iterable[Mapping[str, Any]], user: str) -> set[Permission]:
    """What the (Cluster)RoleBindings among ``manifests`` grant ``user``, from the roles among them.

    A binding to a role that is not among the manifests is an error: its rules cannot be compared.
    """
    objects = [m for m in manifests if m]
    roles = {
        (m["kind"], namespace_of(m), name_of(m)): m for m in objects if m["kind"] in ("ClusterRole", "Role")
    }
    granted: set[Permission] = set()
    for binding in objects:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding") or not _binds(binding, user):
            continue
        ref = binding["roleRef"]
        binding_namespace = namespace_of(binding) if binding["kind"] == "RoleBinding" else ""
        role_namespace = binding_namespace if ref["kind"] == "Role" else ""
        role = roles.get((ref["kind"], role_namespace, ref["name"]))
        if role is None:
            raise ValueError(
                f"{binding['kind']} {name_of(binding)}: {ref['kind']} {ref['name']} is not given"
            )
        granted |= permissions(role.get("rules") or [], binding_namespace)
    return granted


@dataclass(frozen=True, slots=True)
class Coverage:
    """``missing``: requests no permission grants (refused); ``unused``: permissions no request needed."""

    missing: tuple[Request, ...]
    unused: tuple[Permission, ...]


def coverage(granted: Iterable[Permission], requests: Iterable[Request]) -> Coverage:
    held, made = set(granted), set(requests)
    missing = sorted(r for r in made if not any(grants(p, r) for p in held))
    unused = sorted(p for p in held if not any(grants(p, r) for r in made))
    return Coverage(tuple(missing), tuple(unused))
