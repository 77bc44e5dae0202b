"""When a waiting object's news is worth another API write.

While a gang's pods are being created, its explanation changes every cycle only in its counts ("valid: 3,
min: 20", then "valid: 8, min: 20"), and every pod that exists is waiting for the rest. Telling each of
those as a new Event per pod and a new PodGroup condition was most of the writes a gang cost the API
server, for a state that usually lasts seconds. So:

* a message whose words are unchanged is told again at most once per ``RETELL_SECONDS``; a message with
  other words is news, told at once;
* a gang short of pods (``PODS_MISSING``) is told so, in its PodGroup's condition, in an Event on the
  PodGroup and on its pods, only once it has stayed short for ``FORMING_GANG_SECONDS``. A PodGroup status
  patch is the dearest write a scheduler makes: 1.5-1.7 times a pod create in the API server's CPU, an
  Event 0.6 times (``benchmarks/bench_writes.py``); and a gang whose pods are on their way is not news.
"""

from __future__ import annotations

import re
from typing import Final

from volcano_py.api import constants as c

RETELL_SECONDS: Final = 30.0
FORMING_GANG_SECONDS: Final = 30.0
_NUMBERS: Final = re.compile(r"\d+")
PODS_MISSING: Final = c.REASONS_PODS_MISSING


def words(message: str) -> str:
    """The message with every number replaced by ``#``: equal words mean only counts changed."""
    return _NUMBERS.sub("#", message)
