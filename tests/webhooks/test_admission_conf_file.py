"""--admission-conf: read at start, re-read when changed, a bad edit refused and the last good one kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.webhooks.admission_conf_file import AdmissionConfFile

GPU = "resourceGroups:\n- resourceGroup: gpu\n  schedulerName: volcano\n"
CPU = "resourceGroups:\n- resourceGroup: cpu\n  schedulerName: volcano\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def names(source: AdmissionConfFile) -> list[str]:
    return [group.resource_group for group in source.conf().resource_groups]


def test_an_edit_takes_effect_once_the_interval_has_passed(tmp_path: Path) -> None:
    path = tmp_path / "volcano-admission.conf"
    path.write_text(GPU)
    clock = Clock()
    source = AdmissionConfFile(path, interval=1.0, clock=clock)
    assert names(source) == ["gpu"]
    path.write_text(CPU)
    clock.now += 0.5
    assert names(source) == ["gpu"]  # not looked at again yet
    clock.now += 0.5
    assert names(source) == ["cpu"]


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param("resourceGroups:\n- resourceGroup: cpu\n  object: {key: label}\n", id="bad-conf"),
        pytest.param(None, id="file-removed"),
    ],
)
def test_a_bad_edit_keeps_the_last_good_conf(tmp_path: Path, edit: str | None) -> None:
    path = tmp_path / "volcano-admission.conf"
    path.write_text(GPU)
    clock = Clock()
    source = AdmissionConfFile(path, clock=clock)
    if edit is None:
        path.unlink()
    else:
        path.write_text(edit)
    clock.now += 5
    assert names(source) == ["gpu"]
    path.write_text(CPU)
    clock.now += 5
    assert names(source) == ["cpu"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(None, r"--admission-conf .*missing\.conf: cannot read it \(No such file", id="missing"),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: label}\n",
            r"--admission-conf .*: resourceGroups\[0\]\.object\.key: 'label' is not allowed",
            id="bad",
        ),
    ],
)
def test_a_conf_that_cannot_be_used_at_start_is_fatal(
    tmp_path: Path, text: str | None, expected: str
) -> None:
    path = tmp_path / "missing.conf"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match=expected):
        AdmissionConfFile(path)
