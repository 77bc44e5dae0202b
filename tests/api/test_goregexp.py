"""HyperNode ``regexMatch`` patterns are compiled and matched as Volcano's Go code does (RE2 syntax, Go's
error text), by admission, by the HyperNode controller and by the scheduler alike."""

from __future__ import annotations

import pytest
from api_builders import make_hypernode

from volcano_py.api.goregexp import GoRegexpError, compile_go
from volcano_py.api.topology import HyperNode
from volcano_py.api.validation import validate_object
from volcano_py.controllers.hypernode.discovery import member_count
from volcano_py.scheduler.solver.hypernode_tree import TopologyError, _member_nodes


def lines(pattern: str) -> list[str]:
    """What admission says about a HyperNode whose one member selects nodes by ``pattern``."""
    node = make_hypernode(members=[{"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}}])
    return [str(p) for p in validate_object(node)]


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"^node-[0-9]+$", id="anchored"),
        pytest.param(r"(?i)gpu", id="case-flag"),
        pytest.param(r"\pL", id="unicode-class"),
        pytest.param(r"[[:alpha:]]", id="posix-class"),
        pytest.param(r"(?P<rack>r[0-9])-(?<slot>s[0-9])", id="named-groups"),
        pytest.param(r"a{1000}", id="repeat-at-limit"),
        pytest.param(r"\Qa.b\E\z", id="quote-and-end-of-text"),
        pytest.param(r"a{,5}", id="brace-without-min-is-literal"),
        pytest.param(r"\_\-\/", id="escaped-punctuation"),
        pytest.param("(" * 999 + "a" + ")" * 999, id="999-groups-deep"),
        pytest.param("(?:" * 1200 + "a" + ")" * 1200, id="non-capturing-groups-leave-no-depth"),
    ],
)
def test_patterns_go_compiles_are_admitted(pattern: str) -> None:
    compile_go(pattern)
    assert lines(pattern) == []


# (pattern, Go's own error text, what our advice names)
REFUSED = [
    pytest.param(r"(?=x)", "invalid or unsupported Perl syntax: `(?=`", "lookahead `(?=`", id="lookahead"),
    pytest.param(
        r"a(?!b)", "invalid or unsupported Perl syntax: `(?!`", "negative lookahead", id="neg-lookahead"
    ),
    pytest.param(r"(?<=a)b", "invalid named capture: `(?<=a)b`", "lookbehind `(?<=`", id="lookbehind"),
    pytest.param(r"(?<!a)b", "invalid named capture: `(?<!a)b`", "negative lookbehind", id="neg-lookbehind"),
    pytest.param(r"(a)\1", r"invalid escape sequence: `\1`", r"backreference `\1`", id="backreference"),
    pytest.param(
        r"(?P<n>a)(?P=n)",
        "invalid or unsupported Perl syntax: `(?P`",
        "named backreference",
        id="named-backref",
    ),
    pytest.param(
        r"a++", "invalid nested repetition operator: `++`", "possessive quantifier `++`", id="possessive"
    ),
    pytest.param(
        r"a**", "invalid nested repetition operator: `**`", "a repetition of a repetition", id="nested-repeat"
    ),
    pytest.param(
        r"a{1001}", "invalid repeat count: `{1001}`", "repeat count `{1001}` above 1000", id="repeat-limit"
    ),
    pytest.param(
        r"(a{100}){100}",
        "invalid repeat count: `{100}`",
        "nested repeat counts past 1000",
        id="repeat-product",
    ),
    pytest.param(r"node\Z", r"invalid escape sequence: `\Z`", r"Go writes it `\z`", id="python-end-anchor"),
    pytest.param(r"(?>a)", "invalid or unsupported Perl syntax: `(?>`", "atomic group", id="atomic-group"),
    pytest.param(r"(?x)a b", "invalid or unsupported Perl syntax: `(?x`", "flag `x`", id="verbose-flag"),
    pytest.param(
        r"\C", r"invalid escape sequence: `\C`", "single-byte escape", id="any-byte-go-refuses-re2-takes"
    ),
    pytest.param("(" * 1000 + "a" + ")" * 1000, "expression nests too deeply", "", id="1000-groups-deep"),
    pytest.param(r"node-[0-9", "missing closing ]: `[0-9`", "", id="unclosed-class"),
]


@pytest.mark.parametrize(("pattern", "go_error", "construct"), REFUSED)
def test_patterns_go_refuses_are_refused_in_gos_words_then_ours(
    pattern: str, go_error: str, construct: str
) -> None:
    with pytest.raises(GoRegexpError) as raised:
        compile_go(pattern)
    assert raised.value.go_error.startswith(f"error parsing regexp: {go_error}")
    assert construct in raised.value.construct
    [line] = lines(pattern)
    assert line.startswith(
        "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is invalid: "
        f"error parsing regexp: {go_error}"
    )
    if construct:
        assert f"{construct}" in line and "is not supported by Go's RE2 syntax" in line


def test_a_refused_construct_is_named_with_the_fix() -> None:
    assert lines("(?=gpu)node") == [
        "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is invalid: error parsing "
        "regexp: invalid or unsupported Perl syntax: `(?=`; '(?=gpu)node': lookahead `(?=` is not supported "
        "by Go's RE2 syntax (rewrite the pattern without it)"
    ]


# Where Python's re would answer otherwise: Go's $ is the end of the text, and \d \w \s \b are ASCII.
MATCHES = [
    pytest.param(r"^node-[0-9]+$", "node-1\n", False, id="dollar-is-end-of-text"),
    pytest.param(r"^node-\d+$", "node-\u0661", False, id="d-is-ascii"),
    pytest.param(r"^\w+$", "n\u00f6de", False, id="w-is-ascii"),
    pytest.param(r"^\s$", "\u00a0", False, id="s-is-ascii"),
    pytest.param(r"^a\b", "a\u00e9", True, id="b-is-ascii"),
    pytest.param(r"gpu", "node-gpu-1", True, id="match-string-is-a-search"),
    pytest.param(r"^gpu", "node-gpu-1", False, id="anchor-holds"),
    pytest.param(r"(?i)k", "\u212a", True, id="kelvin-folds-to-k"),
]


@pytest.mark.parametrize(("pattern", "name", "matches"), MATCHES)
def test_names_match_as_gos_match_string(pattern: str, name: str, matches: bool) -> None:
    assert compile_go(pattern).match_string(name) is matches


def test_the_controller_and_the_scheduler_count_the_nodes_go_would() -> None:
    nodes = {"node-1": {}, "node-\u0661": {}, "gpu-1": {}}
    obj = make_hypernode(members=[{"type": "Node", "selector": {"regexMatch": {"pattern": r"^node-\d+$"}}}])
    assert member_count(obj, nodes) == 1
    hn = HyperNode.model_validate(obj)
    assert _member_nodes(hn, hn.spec.members[0], nodes) == ["node-1"]


def test_the_scheduler_refuses_what_go_refuses_with_gos_words() -> None:
    obj = make_hypernode(members=[{"type": "Node", "selector": {"regexMatch": {"pattern": r"(?<=rack)1"}}}])
    hn = HyperNode.model_validate(obj)
    with pytest.raises(TopologyError, match=r"invalid named capture: `\(\?<=rack\)1`; lookbehind"):
        _member_nodes(hn, hn.spec.members[0], {"rack1": {}})
    assert member_count(obj, {"rack1": {}}) == 0
