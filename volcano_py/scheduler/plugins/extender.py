"""extender: an HTTP scheduler extender's answers as a predicate, node order, enqueue vote and overused.

The session makes no calls: the runtime asks the extender before it opens (``extender_wire`` says what,
``runtime/extender.py`` asks) and the answers come in on the snapshot. Here they are read as Volcano's
plugin reads its calls' results:

- a node the predicate refused fails with the extender's message; a predicate call that failed passes the
  node with ``extender.ignorable``, and fails it without;
- prioritize scores are added to the node's score (a node the answer leaves out scores 0); a failed call
  adds nothing with ``extender.ignorable``; without it, or when the extender answers with an error, the pod
  is not placed this session (Volcano then finds no best node among two or more candidates; here its nodes
  fail with the error, so a single candidate waits too);
- a jobEnqueueable answer is the plugin's vote on admitting a Pending job (above 0 permit, 0 abstain, below
  0 reject; a failed call permits with ``extender.ignorable`` and rejects without); a queueOverused answer
  says whether the queue is overused (a failed call: overused unless ``extender.ignorable``). Both are
  asked once per session: Volcano's requests carry the job and the queue as the session opened them, and
  with no in-session call the extender has heard nothing since;
- when ``onSessionOpen`` failed and the extender is not ignorable, the plugin does nothing this session,
  as Volcano's registers none of its functions then.

Pods of one spec that the extender answered differently are split into classes of their own
(``class_split``), so each is placed by its own answers, under the greedy path and ``cpsat`` alike.
A reader that asks no extender (``vcctl job why``, the simulator) leaves the plugin out of its answer.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ..framework.arguments import Arguments
from ..framework.classes import TaskClass
from ..framework.extenders import CallFailed, ExtenderAnswers, Refusal
from ..framework.extension import FloatArray, IntArray, NodeVerdict, Vote
from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.task import TaskInfo
from .extender_wire import PLUGIN, ExtenderConf

# One task's answers: the nodes its predicate did not pass, and its prioritize answer (None: not asked).
Scored = tuple[tuple[str, float], ...] | CallFailed | None
Outcome = tuple[frozenset[tuple[str, Refusal | CallFailed]], Scored]


class ExtenderPlugin:
    name = PLUGIN

    def __init__(self, arguments: Arguments) -> None:
        self.conf = ExtenderConf.of(arguments)
        self.outcomes: list[Outcome] = []
        self._verdicts: dict[int, NodeVerdict] = {}
        self._scores: dict[int, FloatArray] = {}
        self._token_of: dict[str, int] = {}
        self.answers = ExtenderAnswers()

    def on_session_open(self, ssn: Session) -> None:
        self.outcomes, self._verdicts, self._scores, self._token_of = [], {}, {}, {}
        self.answers = ExtenderAnswers()
        answers = ssn.snapshot.extender
        if answers is None or (answers.opened is not None and not self.conf.ignorable):
            return
        self.answers = answers
        index: dict[Outcome, int] = {}
        for job in ssn.waiting_jobs():
            for task in job.pending_tasks:
                if task.uid not in answers.asked:
                    continue
                outcome = _outcome(answers, task.uid)
                token = index.get(outcome)
                if token is None:
                    token = index[outcome] = len(self.outcomes)
                    self.outcomes.append(outcome)
                self._token_of[task.uid] = token

    def class_split(self, ssn: Session, task: TaskInfo) -> Hashable | None:
        token = self._token_of.get(task.uid)
        return None if token is None else (PLUGIN, token)

    def on_session_close(self, ssn: Session) -> None:
        self.outcomes, self._verdicts, self._scores, self._token_of = [], {}, {}, {}
        self.answers = ExtenderAnswers()

    def job_enqueueable(self, job: JobInfo) -> Vote:
        answer = self.answers.enqueueable.get(job.uid)
        if answer is None:
            return Vote.ABSTAIN
        if isinstance(answer, CallFailed):
            return Vote.PERMIT if self.conf.ignorable else Vote.REJECT
        return Vote.PERMIT if answer > 0 else Vote.REJECT if answer < 0 else Vote.ABSTAIN

    def explain_enqueue(self, job: JobInfo) -> str | None:
        answer = self.answers.enqueueable.get(job.uid)
        if isinstance(answer, CallFailed) and not self.conf.ignorable:
            return f"extender {self.conf.job_enqueueable} call failed ({answer.message})"
        if isinstance(answer, int) and answer < 0:
            verb = self.conf.job_enqueueable
            return f"extender {self.conf.url_prefix} does not let it in ({verb} answered {answer})"
        return None

    def overused(self, queue: QueueInfo) -> bool:
        answer = self.answers.overused.get(queue.name)
        if isinstance(answer, CallFailed):
            return not self.conf.ignorable
        return bool(answer)

    def _token(self, klass: TaskClass) -> int | None:
        # ``split`` holds one value per splitting plugin; ours is (PLUGIN, token).
        for value in klass.split or ():
            if isinstance(value, tuple) and len(value) == 2 and value[0] == PLUGIN:
                return int(value[1])
        return None

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return False

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        token = self._token(klass)
        if token is None:
            return NodeVerdict(np.ones(len(ssn.table), dtype=np.bool_))
        cached = self._verdicts.get(token)
        if cached is None:
            cached = self._verdicts[token] = self._verdict(ssn, self.outcomes[token])
        return cached

    def _verdict(self, ssn: Session, outcome: Outcome) -> NodeVerdict:
        n = len(ssn.table)
        where = ssn.table.node_index
        masks: dict[str, np.ndarray] = {}
        refused, scores = outcome
        for node, answer in refused:
            row = where.get(node)
            if row is None:
                continue
            if isinstance(answer, Refusal):
                reason = f"refused by extender {self.conf.url_prefix}: {answer.message}"
            elif self.conf.ignorable:
                continue
            else:
                reason = f"not checked: extender {self.conf.predicate} call failed ({answer.message})"
            masks.setdefault(reason, np.zeros(n, dtype=np.bool_))[row] = True
        if isinstance(scores, CallFailed) and (scores.answered or not self.conf.ignorable):
            reason = f"not scored: extender {self.conf.prioritize} call failed ({scores.message})"
            masks[reason] = np.ones(n, dtype=np.bool_)
        ok = np.ones(n, dtype=np.bool_)
        for mask in masks.values():
            ok &= ~mask
        return NodeVerdict(ok, list(masks.items()))

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        token = self._token(klass)
        if token is None:
            return np.zeros(len(rows), dtype=np.float64)
        scores = self._scores.get(token)
        if scores is None:
            scores = np.zeros(len(ssn.table), dtype=np.float64)
            answered = self.outcomes[token][1]
            if isinstance(answered, tuple):
                where = ssn.table.node_index
                for node, score in answered:
                    row = where.get(node)
                    if row is not None:
                        scores[row] = score
            self._scores[token] = scores
        result: FloatArray = scores[rows]
        return result


def _outcome(answers: ExtenderAnswers, uid: str) -> Outcome:
    fits: Mapping[str, Refusal | CallFailed] = answers.fits.get(uid) or {}
    scored = answers.scores.get(uid)
    if scored is None or isinstance(scored, CallFailed):
        return frozenset(fits.items()), scored
    return frozenset(fits.items()), tuple(sorted(scored.items()))
