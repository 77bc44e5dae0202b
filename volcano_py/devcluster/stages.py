"""How fake pods finish: the annotations tests put on pods, and the KWOK stages that act on them.

Import the constants, never spell the keys::

    from volcano_py.devcluster.stages import COMPLETE_AFTER, FAIL_AFTER, EXIT_CODE
    annotations = {COMPLETE_AFTER: "5s"}                  # Succeeded, exit code 0, 5s after Running
    annotations = {FAIL_AFTER: "2s", EXIT_CODE: "3"}      # Failed, exit code 3 (an integer), 2s after Running

A pod with neither annotation stays Running until deleted. Durations are Go durations ("500ms", "5s", "1m")
or an RFC 3339 time ("finish at"). The clock starts when KWOK sees the pod Running, and restarts if KWOK does.

kwok v0.8.0 has no built-in stages, so its ``--config`` must list every stage. We run kwok's own node stages
and its pod-ready/pod-delete (the heartbeat spread out, pod-delete run once per deletion: ``kwok_config``),
and replace its pod-complete: that one finishes, at once, every pod owned by any kind named ``Job`` --
Volcano's ``batch.volcano.sh`` Jobs included -- which would make lifecycle tests meaningless. Stage
selectors are kept mutually exclusive because KWOK picks at random among matching stages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from volcano_py.api.objects import name_of, spec_of

COMPLETE_AFTER = "kwok.volcano-py.io/complete-after"
FAIL_AFTER = "kwok.volcano-py.io/fail-after"
EXIT_CODE = "kwok.volcano-py.io/exit-code"
DEFAULT_EXIT_CODE = 1

# Our stage names, for kwok's logs and for tests that look for them in the generated config.
COMPLETE_STAGE = "volcano-py-pod-complete-after"
FAIL_STAGE = "volcano-py-pod-fail-after"

# kwok's node heartbeat re-stamps a node 600-610 s after its last stamp, so nodes created together stay in
# step: thousands of node writes land in one burst every ten minutes and whichever benchmark window holds a
# burst pays for it. Drawing each delay from 300-900 s keeps the mean rate and spreads the stamps out within
# a few rounds, as kubelets' own timers are spread.
NODE_HEARTBEAT_STAGE = "node-heartbeat-with-lease"
NODE_HEARTBEAT_DELAY = {"durationMilliseconds": 300_000, "jitterDurationMilliseconds": 900_000}
# kwok's pod-delete runs only on a pod whose deletion still has a grace period (see ``_once``).
POD_DELETE_STAGE = "pod-delete"
NOT_GRACELESS = {"key": ".metadata.deletionGracePeriodSeconds == 0", "operator": "NotIn", "values": ["true"]}


def _annotation(key: str) -> str:
    return f'.metadata.annotations["{key}"]'


def _terminated_status(*, phase: str, reason: str, exit_code: str) -> str:
    """A statusTemplate (Go template rendered by KWOK) that ends every container of the pod.

    ``exit_code`` is a template expression evaluated against the pod, before ``range`` rebinds the dot.
    """
    return (
        "{{ $now := Now }}\n"
        f"{{{{ $exitCode := {exit_code} }}}}\n"
        "conditions:\n"
        "- lastTransitionTime: {{ $now | Quote }}\n"
        "  reason: PodCompleted\n"
        '  status: "False"\n'
        "  type: Ready\n"
        "- lastTransitionTime: {{ $now | Quote }}\n"
        "  reason: PodCompleted\n"
        '  status: "False"\n'
        "  type: ContainersReady\n"
        "containerStatuses:\n"
        "{{ range .spec.containers }}\n"
        "- image: {{ .image | Quote }}\n"
        "  name: {{ .name | Quote }}\n"
        "  ready: false\n"
        "  restartCount: 0\n"
        "  started: false\n"
        "  state:\n"
        "    terminated:\n"
        "      exitCode: {{ $exitCode }}\n"
        "      finishedAt: {{ $now | Quote }}\n"
        f"      reason: {reason}\n"
        "      startedAt: {{ $now | Quote }}\n"
        "{{ end }}\n"
        f"phase: {phase}\n"
    )


def _running_unfinished() -> list[dict[str, object]]:
    return [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Running"]},
    ]


def complete_stage() -> dict[str, object]:
    """Running pod with COMPLETE_AFTER (and no FAIL_AFTER) -> Succeeded, exit code 0, after that delay."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": COMPLETE_STAGE},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    *_running_unfinished(),
                    {"key": _annotation(COMPLETE_AFTER), "operator": "Exists"},
                    # FAIL_AFTER wins when both are set, so the two stages never match the same pod.
                    {"key": _annotation(FAIL_AFTER), "operator": "DoesNotExist"},
                ]
            },
            # No jitter fields: with jitter KWOK waits the jitter instead of the duration.
            "delay": {
                "durationMilliseconds": 0,
                "durationFrom": {"expressionFrom": _annotation(COMPLETE_AFTER)},
            },
            "next": {
                "statusTemplate": _terminated_status(phase="Succeeded", reason="Completed", exit_code="0")
            },
        },
    }


def fail_stage() -> dict[str, object]:
    """Running pod with FAIL_AFTER -> Failed with EXIT_CODE (default 1) after that delay."""
    exit_code = f'or (index .metadata.annotations "{EXIT_CODE}") "{DEFAULT_EXIT_CODE}"'
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": FAIL_STAGE},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    *_running_unfinished(),
                    {"key": _annotation(FAIL_AFTER), "operator": "Exists"},
                ]
            },
            "delay": {
                "durationMilliseconds": 0,
                "durationFrom": {"expressionFrom": _annotation(FAIL_AFTER)},
            },
            "next": {
                "statusTemplate": _terminated_status(phase="Failed", reason="Error", exit_code=exit_code)
            },
        },
    }


def our_stages() -> list[dict[str, object]]:
    return [complete_stage(), fail_stage()]


def _spread(stage: dict[str, Any]) -> dict[str, Any]:
    if name_of(stage) != NODE_HEARTBEAT_STAGE:
        return stage
    return {**stage, "spec": {**spec_of(stage), "delay": dict(NODE_HEARTBEAT_DELAY)}}


def _once(stage: dict[str, Any]) -> dict[str, Any]:
    """kwok's pod-delete, left alone by a pod whose deletion has a grace period of 0.

    kwok deletes a pod by name, with no uid precondition (a kubelet sends its pod's uid). Its own delete
    shortens the pod's grace period to 0 in one write before removing it, and that write is one more event
    of a terminating pod: the stage then ran again and sent a second delete, which, when it came after the
    pod's controller had made a successor under the same name, deleted the successor (read, as Volcano reads
    any deletion it did not make, as an eviction). A grace period of 0 means the API server is removing the
    pod itself (or its finalizers hold it, which this stage never clears): nothing is left for kwok to do.
    gojq reads the number as a float, which kwok's In/NotIn never matches, so the test is written as a
    boolean; an expression that fails to evaluate reads as absent, which NotIn matches (kwok as before).
    """
    if name_of(stage) != POD_DELETE_STAGE:
        return stage
    spec = spec_of(stage)
    selector = dict(spec.get("selector") or {})
    selector["matchExpressions"] = [*(selector.get("matchExpressions") or ()), dict(NOT_GRACELESS)]
    return {**stage, "spec": {**spec, "selector": selector}}


def kwok_config(kwok_stage_texts: Iterable[str]) -> str:
    """The multi-document ``--config`` for kwok: kwok's stages verbatim, then ours.

    No KwokConfiguration document: kwok v0.8.0 does not default the options of one read from ``--config``
    (it then refuses a play-stage parallelism of 0), so its settings are passed as flags instead.

    Refuses a kwok stage that would complete pods on its own (kwok's pod-complete), since it would race ours.
    Two stages are changed: the node heartbeat's delay is ``NODE_HEARTBEAT_DELAY``, and pod-delete leaves a
    pod deleted with a grace period of 0 alone (``_once``).
    """
    documents = []
    for text in kwok_stage_texts:
        parsed = list(yaml.safe_load_all(text))
        for document in parsed:
            if not isinstance(document, dict) or document.get("kind") != "Stage":
                raise ValueError(f"expected only kwok Stage documents, got {str(document)[:80]!r}")
            if name_of(document) == "pod-complete":
                raise ValueError(
                    "kwok's pod-complete stage finishes every pod owned by a kind named Job at once; "
                    "leave it out, our complete-after/fail-after stages replace it"
                )
        if any(name_of(document) in (NODE_HEARTBEAT_STAGE, POD_DELETE_STAGE) for document in parsed):
            documents += [yaml.safe_dump(_once(_spread(document)), sort_keys=False) for document in parsed]
        else:
            documents.append(text.strip() + "\n")
    documents += [yaml.safe_dump(stage, sort_keys=False) for stage in our_stages()]
    return "---\n".join(documents)
