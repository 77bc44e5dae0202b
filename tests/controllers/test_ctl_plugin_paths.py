"""Where the objects Job plugins ask for live in the REST API."""

from __future__ import annotations

import pytest

from volcano_py.controllers.job.plugin_objects import object_path


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "path"),
    [
        ("v1", "Service", "job", "/api/v1/namespaces/ns/services/job"),
        ("v1", "ConfigMap", None, "/api/v1/namespaces/ns/configmaps"),
        ("v1", "Secret", "job-ssh", "/api/v1/namespaces/ns/secrets/job-ssh"),
        (
            "networking.k8s.io/v1",
            "NetworkPolicy",
            "job",
            "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies/job",
        ),
    ],
)
def test_object_paths(api_version: str, kind: str, name: str | None, path: str) -> None:
    assert object_path(api_version, kind, "ns", name) == path
