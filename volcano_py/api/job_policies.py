"""Lifecycle-policy rules: a policy reacts to events or to an exit code, never both; users may name only the
events and actions Volcano lets them; one policy per event or exit code; and ``*`` stands alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from volcano_py.api.batch import LifecyclePolicy
from volcano_py.api.bus import POLICY_ACTIONS, POLICY_EVENTS, Event
from volcano_py.api.messages import (
    VOLCANO_ANY_EVENT_ALONE,
    VOLCANO_DUPLICATE_EVENT,
    VOLCANO_DUPLICATE_EXIT_CODE,
    VOLCANO_EVENT_AND_EXIT_CODE,
    VOLCANO_EXIT_CODE_ZERO,
    VOLCANO_INVALID_ACTION,
    VOLCANO_INVALID_EVENT,
    VOLCANO_NO_EVENT_OR_EXIT_CODE,
    volcano_said,
)
from volcano_py.api.problems import Problem, join_path

_EVENTS = ", ".join(e.value for e in POLICY_EVENTS)
_ACTIONS = ", ".join(a.value for a in POLICY_ACTIONS)


def check_policies(policies: Sequence[LifecyclePolicy], path: str) -> list[Problem]:
    """Lifecycle policies: event(s) xor exitCode, allowed events and actions, no repeats, '*' alone."""
    problems: list[Problem] = []
    events_at: dict[Event, int] = {}
    codes_at: dict[int, int] = {}
    for i, policy in enumerate(policies):
        here = join_path(path, i)
        events = policy.all_events()
        if events and policy.exit_code is not None:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_EVENT_AND_EXIT_CODE,
                        "keep one of event and exitCode: a policy reacts to events or to an exit code",
                    ),
                )
            )
            continue
        if not events and policy.exit_code is None:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_NO_EVENT_OR_EXIT_CODE,
                        "add one, e.g. 'event: PodFailed' or 'exitCode: 1'",
                    ),
                )
            )
            continue
        if policy.action is None:
            # Volcano admits a policy without an action and then does nothing when it matches.
            trigger = "an event" if events else "an exitCode"
            problems.append(
                Problem(join_path(here, "action"), f"is required with {trigger} (use one of {_ACTIONS})")
            )
        if events:
            for event in events:
                if event not in POLICY_EVENTS:
                    problems.append(
                        Problem(
                            join_path(here, "event" if event == policy.event else "events"),
                            volcano_said(
                                VOLCANO_INVALID_EVENT,
                                f"{event.value!r} is raised internally and cannot be used in a policy "
                                f"(use one of {_EVENTS})",
                            ),
                        )
                    )
                elif event in events_at:
                    problems.append(
                        Problem(
                            join_path(here, "event" if event == policy.event else "events"),
                            volcano_said(
                                VOLCANO_DUPLICATE_EVENT,
                                f"event {event.value!r} is already handled by "
                                f"{join_path(path, events_at[event])} (keep one policy per event)",
                            ),
                        )
                    )
                else:
                    events_at[event] = i
            if policy.action is not None and policy.action not in POLICY_ACTIONS:
                problems.append(
                    Problem(
                        join_path(here, "action"),
                        volcano_said(
                            VOLCANO_INVALID_ACTION,
                            f"{policy.action.value!r} is used internally and cannot be used in a policy "
                            f"(use one of {_ACTIONS})",
                        ),
                    )
                )
        elif policy.exit_code is not None:
            code = policy.exit_code
            if code == 0:
                problems.append(
                    Problem(
                        join_path(here, "exitCode"),
                        volcano_said(VOLCANO_EXIT_CODE_ZERO, "0 means success (use a non-zero exit code)"),
                    )
                )
            elif code in codes_at:
                problems.append(
                    Problem(
                        join_path(here, "exitCode"),
                        volcano_said(
                            VOLCANO_DUPLICATE_EXIT_CODE.format(code=code),
                            f"already handled by {join_path(path, codes_at[code])} "
                            "(keep one policy per exit code)",
                        ),
                    )
                )
            else:
                codes_at[code] = i
    if Event.ANY in events_at and len(events_at) > 1:
        problems.append(
            Problem(
                join_path(path, events_at[Event.ANY], "event"),
                volcano_said(
                    VOLCANO_ANY_EVENT_ALONE,
                    "'*' matches every event, so no other event policy may be listed "
                    "(remove the other event policies or '*')",
                ),
            )
        )
    return problems
