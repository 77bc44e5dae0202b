"""``volcano-py validate`` never crashes: manifests mutated at random (a value replaced by any YAML value, a
key dropped or added, the text cut or given stray bytes) end in exit code 0, 1 or 2, never in a traceback."""

from __future__ import annotations

import copy
import io
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from volcano_py.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
SEEDS: list[Any] = [
    doc
    for path in sorted((ROOT / "examples").glob("*.yaml"))
    for doc in yaml.safe_load_all(path.read_text())
    if doc is not None
]

# Any value YAML can hold, kept small: what a user may put where a field expects something else.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "-1", "1e400", "4Gi", "500m", "Always", "*", "root", "default", "a/b/c", "..", "-"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=3)
    ),
    max_leaves=6,
)


def _mutate(doc: Any, data: st.DataObject) -> Any:
    """One random change somewhere in ``doc``: replace, delete or add at a node reached by a random walk."""
    root = copy.deepcopy(doc)
    parent: Any = None
    key: Any = None
    node = root
    # Mostly deep: the fields a user gets wrong (resources, ports, probes) sit six to ten levels down.
    while isinstance(node, dict | list) and node and data.draw(st.integers(0, 7), label="descend") > 0:
        key = data.draw(
            st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))), label="key"
        )
        parent, node = node, node[key]
    action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
    if parent is None:
        return data.draw(values, label="document") if action == "replace" else root
    if action == "replace":
        parent[key] = data.draw(values, label="value")
    elif action == "delete":
        del parent[key]
    elif isinstance(node, dict):
        node[data.draw(st.text(max_size=8), label="new key")] = data.draw(values, label="new value")
    elif isinstance(node, list):
        node.append(data.draw(values, label="new item"))
    return root


def _validate(tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(content)
    args = build_parser().parse_args(["validate", str(path)])
    code: int = args.func(args)  # an exception here is the traceback a user would see
    out, err = capsys.readouterr()
    return code, out + err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), times=st.integers(min_value=1, max_value=3))
def test_mutated_manifests_get_an_exit_code_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject, times: int
) -> None:
    docs = [data.draw(st.sampled_from(SEEDS), label="seed")]
    for _ in range(times):
        docs[0] = _mutate(docs[0], data)
    text = yaml.safe_dump_all(docs, allow_unicode=True)
    code, output = _validate(tmp_path, text.encode(), capsys)
    assert code in (0, 1, 2)
    assert "Traceback" not in output


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(min_value=0, max_value=1), junk=st.binary(max_size=6))
def test_cut_or_corrupted_text_gets_an_exit_code_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: Any, cut: float, junk: bytes
) -> None:
    text = yaml.safe_dump(seed).encode()
    at = int(len(text) * cut)
    code, output = _validate(tmp_path, text[:at] + junk + text[at:], capsys)
    assert code in (0, 1, 2)
    assert "Traceback" not in output


def test_the_real_command_prints_no_traceback_on_a_bad_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through ``main`` (logging set up, as a user runs it) on the worst of the cases above at once."""
    from volcano_py.cli.main import main

    path = tmp_path / "bad.yaml"
    path.write_text(
        "kind: Job\nspec: {tasks: [{template: {spec: {containers: [{resources: {limits: {cpu: [1]}}}]}}}]}\n"
    )
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["validate", str(path)]) == 1
    assert "Traceback" not in stderr.getvalue()


def _as_admitted(doc: Any, seed: dict[str, Any]) -> dict[str, Any]:
    """What the API server would still send the webhook: a mapping of the seed's kind with a named metadata
    (the server routes by apiVersion/kind and fills the name); everything else as mutated."""
    body = dict(doc) if isinstance(doc, dict) else {}
    body["apiVersion"], body["kind"] = seed["apiVersion"], seed["kind"]
    metadata = body.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        metadata["name"] = "fuzzed"
    body["metadata"] = metadata
    return body


ADMITTED_SEEDS = [
    doc for doc in SEEDS if doc.get("kind") in ("Job", "Queue", "PodGroup", "JobFlow", "CronJob")
]


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_admission_decides_on_mutated_objects_without_raising(data: st.DataObject) -> None:
    """A webhook that raises answers the API server with a 500 that names no field; it must decide instead."""
    from volcano_py.webhooks.flow import validate_flow_object
    from volcano_py.webhooks.job import mutate_job, validate_job_create, validate_job_update
    from volcano_py.webhooks.patch import apply_patch
    from volcano_py.webhooks.podgroup import validate_podgroup_create
    from volcano_py.webhooks.queue import mutate_queue, validate_queue_write

    seed = data.draw(st.sampled_from(ADMITTED_SEEDS), label="seed")
    body = _as_admitted(_mutate(seed, data), seed)
    queues = {
        "default": {"metadata": {"name": "default"}, "spec": {}, "status": {"state": "Open"}},
        "root": {"metadata": {"name": "root"}, "spec": {}, "status": {"state": "Open"}},
    }
    kind = seed["kind"]
    if kind == "Job":
        mutated = copy.deepcopy(body)
        apply_patch(mutated, mutate_job(body))
        assert isinstance(validate_job_create(mutated, queues), list)
        assert isinstance(validate_job_update(_as_admitted(seed, seed), body), list)
    elif kind == "Queue":
        mutated = copy.deepcopy(body)
        apply_patch(mutated, mutate_queue(body))
        assert isinstance(
            validate_queue_write(mutated, {**queues, **{q["metadata"]["name"]: q for q in [seed]}}), list
        )
    elif kind == "PodGroup":
        assert isinstance(validate_podgroup_create(body, queues), list)
    else:
        assert isinstance(validate_flow_object(body), list)
