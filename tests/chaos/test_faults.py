"""Every fault kind a chaos run may be asked for has its injection: the ones without a standby in
``faults.FAULTS``, the ones that need one in ``failover``."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.chaoslib.config import ALL_FAULT_KINDS, FAULT_KINDS, HA_FAULT_KINDS, ChaosConfig
from benchmarks.chaoslib.faults import FAULTS


def test_each_kind_without_a_standby_has_its_injection() -> None:
    assert set(FAULTS) == set(FAULT_KINDS)
    assert not set(FAULTS) & set(HA_FAULT_KINDS)


def test_the_config_refuses_unknown_kinds_and_standby_kinds_without_ha(tmp_path: Path) -> None:
    assert ChaosConfig(work_dir=tmp_path).faults == FAULT_KINDS
    assert ChaosConfig(work_dir=tmp_path, ha=True).faults == ALL_FAULT_KINDS
    with pytest.raises(ValueError, match="unknown fault kinds"):
        ChaosConfig(work_dir=tmp_path, faults=("nope",))
    with pytest.raises(ValueError, match="need a standby"):
        ChaosConfig(work_dir=tmp_path, faults=(HA_FAULT_KINDS[0],))
