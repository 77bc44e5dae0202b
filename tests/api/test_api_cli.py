"""``volcano-py validate`` and ``volcano-py crds`` as a user runs them: output lines and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from volcano_py.api.crd import CRDS
from volcano_py.cli.main import build_parser


def main(argv: list[str]) -> int:
    """``volcano-py ARGV`` without ``main``'s logging set-up, which would bind structlog to pytest's captured
    stderr and break logging in later tests once that stream is closed."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


ROOT = Path(__file__).resolve().parents[2]

BAD_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: bad
  namespace: team-a
spec:
  minAvailable: 3
  tasks:
    - name: worker
      replicas: 1
      template: {spec: {containers: [{name: c, image: busybox}]}}
    - name: worker
      replicas: 1
      policies:
        - event: PodFailed
          exitCode: 1
          action: RestartJob
      template: {spec: {containers: [{name: c, image: busybox}]}}
"""


def test_validate_examples_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (ROOT / "examples").glob("*.yaml"))
    assert main(["validate", *files]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "0 problem(s)" in captured.err


def test_validate_reports_one_line_per_problem_and_exits_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_JOB + "---\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: Job/team-a/bad: spec.tasks[1].name: duplicated task name worker; also used "
        "by spec.tasks[0] (give each task a unique name)",
        f"{path}: Job/team-a/bad: spec.tasks[1].policies[0]: must not specify event and exitCode "
        "simultaneously; keep one of event and exitCode: a policy reacts to events or to an exit code",
        f"{path}: Job/team-a/bad: spec.minAvailable: job 'minAvailable' should not be greater than total "
        "replicas in tasks; 3 is greater than the sum of task replicas 2 "
        "(lower minAvailable to at most 2 or add replicas)",
    ]


def test_validate_refuses_a_pod_asking_whole_and_shared_gpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  schedulerName: volcano\n  containers:\n"
        "  - name: c\n    image: busybox\n    resources:\n"
        "      limits: {volcano.sh/gpu-number: 1, volcano.sh/gpu-memory: 2000}\n"
    )
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: Pod/p: spec.containers[0].resources.limits.volcano.sh/gpu-memory: asks for a shared GPU "
        "while spec.containers[0].resources.limits.volcano.sh/gpu-number asks for whole GPUs "
        "(volcano.sh/gpu-number); a pod gets either whole GPUs or a share of one (drop one of them)"
    ]


def test_validate_reports_yaml_syntax_errors_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: Job\nspec:\n  tasks: [\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: line 4: not valid YAML:")
    assert out.rstrip().endswith("(fix the syntax)")


def test_validate_missing_file_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_validate_walks_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.yml").write_text(BAD_JOB)
    (tmp_path / "notes.txt").write_text("not yaml: [")
    assert main(["validate", str(tmp_path)]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_crds_writes_what_is_committed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds", "--output-dir", str(tmp_path)]) == 0
    written = {p.name: p.read_text() for p in tmp_path.glob("*.yaml")}
    committed = {p.name: p.read_text() for p in (ROOT / "crds").glob("*.yaml")}
    assert written == committed
    assert main(["crds", "--output-dir", str(tmp_path), "--check"]) == 0


def test_crds_check_fails_on_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds", "--output-dir", str(tmp_path)]) == 0
    stale = tmp_path / "batch.volcano.sh_jobs.yaml"
    stale.write_text(stale.read_text().replace("vcjob", "vcj"))
    capsys.readouterr()
    assert main(["crds", "--output-dir", str(tmp_path), "--check"]) == 1
    assert capsys.readouterr().out == (
        f"{stale}: differs from the models (run `volcano-py crds` and commit the result)\n"
    )


def test_crds_stdout_is_one_stream_of_all_crds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds", "--stdout"]) == 0
    assert capsys.readouterr().out.count("kind: CustomResourceDefinition") == len(CRDS)


def test_validate_refuses_duplicate_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  "
        "weight: 1\n  weight: 2\n"
    )
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == (
        f"{path}: line 6: not valid YAML: key 'weight' is given twice and only the last would "
        "count (keep one)\n"
    )


def test_validate_checks_the_items_of_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "list.yaml"
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}
    path.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [{**queue, "spec": {"weight": -1}}]})
    )
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}: Queue/q: spec.weight: -1 is too small (use a value >= 1)\n"
