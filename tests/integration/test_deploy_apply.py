"""``kubectl apply -f deploy/volcano-py.yaml`` is accepted by a real API server (server-side dry run).

Server-side dry run runs admission, defaulting and schema validation for every object without persisting
it; namespaced objects need their namespace to exist, so the Namespace part is applied for real first (the
CRDs already are, by the session fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "deploy" / "volcano-py.yaml"


def test_bundle_applies_with_server_side_dry_run(cluster: Any) -> None:
    cluster.kubectl("apply", "-f", str(REPO / "deploy" / "parts" / "00-namespace.yaml"))
    done = cluster.kubectl("apply", "--dry-run=server", "-f", str(BUNDLE), check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    objects = [o for o in yaml.safe_load_all(BUNDLE.read_text(encoding="utf-8")) if o]
    for obj in objects:
        # kubectl names each object as <resource>[.<group>]/<name>; the name after the slash is enough here.
        name = obj["metadata"]["name"]
        said = [line for line in lines if line.split(" ", 1)[0].endswith(f"/{name}")]
        assert said and all("(server dry run)" in line for line in said), f"{obj['kind']} {name}: {said}"
    assert len(lines) == len(objects)


def test_dry_run_refuses_what_the_server_would_refuse(cluster: Any, tmp_path: Path) -> None:
    """The dry run is a real check: a Deployment the server cannot accept fails it, naming the field."""
    cluster.kubectl("apply", "-f", str(REPO / "deploy" / "parts" / "00-namespace.yaml"))
    objects = [o for o in yaml.safe_load_all(BUNDLE.read_text(encoding="utf-8")) if o]
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    deployment["spec"]["replicas"] = "one"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(deployment))
    done = cluster.kubectl("apply", "--dry-run=server", "-f", str(broken), check=False)
    assert done.returncode != 0
    assert "replicas" in done.stderr
