"""Loading volcano-scheduler.conf: Volcano's format and default, and load errors that name the entry."""

from __future__ import annotations

import pytest

from volcano_py.scheduler.core import ConfError, load_conf


def test_default_conf_is_volcanos_plus_cpsat() -> None:
    conf = load_conf()
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in conf.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder", "cpsat"],
    ]
    gang = conf.option("gang")
    assert gang is not None and not gang.enabled("enablePreemptable") and gang.enabled("enableJobReady")


def test_full_conf_with_flags_arguments_and_configurations() -> None:
    conf = load_conf(
        """
actions: "enqueue,allocate, backfill"
tiers:
- plugins:
  - name: gang
    enableJobOrder: false
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.example.com/foo: 3
  - name: overcommit
    arguments: {overcommit-factor: "1.5"}
configurations:
- name: allocate
  arguments: {predicateErrorCacheEnable: "false"}
"""
    )
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert conf.option("gang").flags == {"enableJobOrder": False}  # type: ignore[union-attr]
    assert conf.option("binpack").arguments["binpack.weight"] == 10  # type: ignore[union-attr]
    assert conf.configurations["allocate"] == {"predicateErrorCacheEnable": "false"}


ONE = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: '
BAD = [
    pytest.param('actions: "enqueue, allocat"\ntiers: []', "unknown action 'allocat'", id="unknown-action"),
    pytest.param('actions: ""\ntiers: []', "actions: is empty", id="empty-actions"),
    pytest.param(
        'actions: "allocate"\ntiers:\n- plugins: [{name: gangg}]',
        "tiers[0].plugins[0]: unknown plugin 'gangg'",
        id="unknown-plugin",
    ),
    pytest.param(
        'actions: "allocate"\ntiers:\n- plugins: [{name: gang}]\n- plugins: [{name: gang}]',
        "appears twice",
        id="duplicate-plugin",
    ),
    pytest.param(
        'actions: "allocate"\ntiers:\n- plugins: [{name: gang, enableJobOrdr: false}]',
        "unknown option 'enableJobOrdr'",
        id="unknown-flag",
    ),
    pytest.param(
        'actions: "allocate"\ntiers:\n- plugins: [{name: gang, enableJobOrder: "no"}]',
        "enableJobOrder must be true or false",
        id="flag-not-bool",
    ),
    pytest.param(
        ONE + "binpack\n    arguments: {binpack.weight: heavy}",
        "plugin binpack: argument 'binpack.weight' must be an integer, got 'heavy'",
        id="bad-argument-type",
    ),
    pytest.param(
        ONE + "overcommit\n    arguments: {overcommit-factor: 0.5}",
        "must be a number >= 1.0",
        id="overcommit-factor-below-one",
    ),
    pytest.param(
        ONE + "nodeorder\n    arguments: {leastrequested.wieght: 2}",
        "unknown argument(s) leastrequested.wieght",
        id="argument-typo",
    ),
    pytest.param(
        ONE + "drf\n    enableHierarchy: true\n  - name: proportion",
        "enableHierarchy conflicts with plugin proportion",
        id="drf-hierarchy-with-proportion",
    ),
    pytest.param(
        'actions: "allocate"\nconfigurations:\n- name: shufle\n  arguments: {}',
        "configurations[0]",
        id="configuration-for-unknown-action",
    ),
    pytest.param('actions: "allocate"\ntier: []', "unknown top-level key(s) tier", id="top-level-typo"),
    pytest.param("actions: [allocate", "not valid YAML", id="bad-yaml"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_conf_fails_at_load_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(ConfError) as err:
        load_conf(text)
    assert message in str(err.value)


def test_binpack_weight_for_unlisted_resource_is_refused() -> None:
    with pytest.raises(ConfError, match=r"add example\.com/foo to binpack\.resources"):
        load_conf(ONE + "binpack\n    arguments: {binpack.resources.example.com/foo: 2}")


# Volcano splits ``actions`` at every comma and trims each entry with Go's strings.TrimSpace; an entry that is
# then empty is an action it cannot find.
ACTIONS_ACCEPTED = [
    pytest.param("enqueue,allocate, backfill", ("enqueue", "allocate", "backfill"), id="spaces-optional"),
    pytest.param(" allocate ,\tbackfill ", ("allocate", "backfill"), id="spaces-and-tabs-trimmed"),
    pytest.param("\u00a0allocate\u3000", ("allocate",), id="unicode-spaces-trimmed-as-go-does"),
    pytest.param("allocate, allocate", ("allocate", "allocate"), id="listed-twice-runs-twice"),
]


@pytest.mark.parametrize(("actions", "expected"), ACTIONS_ACCEPTED)
def test_actions_split_as_volcano_splits_them(actions: str, expected: tuple[str, ...]) -> None:
    assert load_conf(f'actions: "{actions}"\ntiers: []').actions == expected


ACTIONS_REFUSED = [
    pytest.param(
        "enqueue, allocate,",
        "failed to find Action ; actions: 'enqueue, allocate,' has an empty entry (drop the extra comma, ",
        id="trailing-comma",
    ),
    pytest.param(
        "allocate,,backfill",
        "failed to find Action ; actions: 'allocate,,backfill' has an empty entry",
        id="doubled-comma",
    ),
    pytest.param(
        ",allocate", "failed to find Action ; actions: ',allocate' has an empty entry", id="leading-comma"
    ),
    pytest.param("  ", "failed to find Action   ; actions: is empty (list the actions to run", id="blank"),
    pytest.param(
        "allocate, Backfill",
        "failed to find Action  Backfill; actions: unknown action 'Backfill' (known: ",
        id="names-are-case-sensitive",
    ),
    pytest.param(
        "allocate\\x1f",  # YAML's escape, in the double-quoted string
        "failed to find Action allocate\u001f; actions: unknown action 'allocate\\x1f'",
        id="unit-separator-is-not-a-go-space",
    ),
]


@pytest.mark.parametrize(("actions", "message"), ACTIONS_REFUSED)
def test_actions_volcano_cannot_find_are_refused_in_its_words(actions: str, message: str) -> None:
    with pytest.raises(ConfError) as raised:
        load_conf(f'actions: "{actions}"\ntiers: []')
    assert str(raised.value).startswith(message), str(raised.value)
