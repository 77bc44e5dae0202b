"""The turns at a capped Queue's room between the batch and agent schedulers: the rule both follow."""

from __future__ import annotations

from volcano_py.scheduler.runtime.queue_room import (
    LEASE_SECONDS,
    Turn,
    claim,
    read_turns,
    release,
    turns_text,
)


def test_a_free_turn_is_taken_and_a_held_one_is_not() -> None:
    turns, held, wait_for, changed = claim({}, ["q1"], "agent", now=100.0)
    assert held == {"q1"} and changed and wait_for == ""
    assert turns["q1"] == Turn("agent", 100.0, "")
    _, held, _, changed = claim(turns, ["q1"], "batch", now=101.0)
    assert held == set() and not changed


def test_the_next_holder_waits_for_the_last_holders_binds() -> None:
    turns, _, _, _ = claim({}, ["q1", "q2"], "agent", now=100.0)
    given, changed = release(turns, ["q1"], "agent", version="700")
    assert changed and given["q1"] == Turn("", 100.0, "700") and given["q2"].holder == "agent"
    taken, held, wait_for, _ = claim(given, ["q1", "q2"], "batch", now=100.5)
    assert held == {"q1"} and wait_for == "700"  # q2 is still the agent's
    assert taken["q1"].holder == "batch"


def test_a_crashed_holders_turn_expires() -> None:
    turns = {"q1": Turn("agent", 100.0, "5")}
    assert claim(turns, ["q1"], "batch", now=100.0 + LEASE_SECONDS)[1] == set()
    assert claim(turns, ["q1"], "batch", now=100.1 + LEASE_SECONDS)[1] == {"q1"}


def test_a_fresh_turn_of_ours_needs_no_write_and_an_old_one_is_renewed() -> None:
    turns = {"q1": Turn("agent", 100.0, "")}
    assert claim(turns, ["q1"], "agent", now=101.0)[1:] == ({"q1"}, "", False)
    renewed, held, _, changed = claim(turns, ["q1"], "agent", now=100.0 + LEASE_SECONDS)
    assert held == {"q1"} and changed and renewed["q1"].renewed == 100.0 + LEASE_SECONDS


def test_only_the_holder_gives_a_turn_back() -> None:
    turns = {"q1": Turn("agent", 100.0, "")}
    assert release(turns, ["q1"], "batch", "9") == (turns, False)


def test_the_turns_round_trip_through_the_lease_annotation() -> None:
    turns = {"q1": Turn("agent", 100.5, "42"), "q2": Turn("", 3.0, "")}
    lease = {"metadata": {"annotations": {"volcano-py.io/queue-turns": turns_text(turns)}}}
    assert read_turns(lease) == turns
    assert read_turns({"metadata": {"annotations": {"volcano-py.io/queue-turns": "not json"}}}) == {}
    assert read_turns({}) == {}
