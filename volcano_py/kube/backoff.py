"""Exponential back-off with full jitter, for reconnecting watches and retrying writes.

Pure (the random source is injected) so the schedule can be tested without sleeping.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(slots=True)
class Backoff:
    """Delays grow ``initial * factor**n`` up to ``maximum``; ``reset()`` after a success starts over.

    Full jitter (a uniform draw in ``[delay * (1 - jitter), delay]``) keeps many watchers that lost the API
    server at the same instant from reconnecting in lockstep.
    """

    initial: float = 0.2
    factor: float = 2.0
    maximum: float = 30.0
    jitter: float = 0.5
    rng: random.Random = field(default_factory=random.Random)
    attempts: int = 0

    def __post_init__(self) -> None:
        if self.initial <= 0:
            raise ValueError(f"Backoff.initial must be > 0 seconds, got {self.initial}")
        if self.factor < 1:
            raise ValueError(f"Backoff.factor must be >= 1, got {self.factor}")
        if self.maximum < self.initial:
            raise ValueError(f"Backoff.maximum ({self.maximum}) must be >= initial ({self.initial})")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"Backoff.jitter must be within [0, 1], got {self.jitter}")

    def next_delay(self) -> float:
        """The delay before the next attempt; each call counts one failed attempt."""
        ceiling = min(self.maximum, self.initial * self.factor**self.attempts)
        self.attempts += 1
        return ceiling * (1 - self.jitter * self.rng.random())

    def reset(self) -> None:
        self.attempts = 0
