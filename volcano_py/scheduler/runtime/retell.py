"""When a waiting object's news is worth another API write.

While a gang's pods are being created, its explanation changes every cycle only in its counts ("valid: 3,
min: 20", then "valid: 8, min: 20"), and every pod that exists is waiting for the rest. Telling each of
those as a new Event per pod and a new PodGroup condition was most of the writes a gang cost the API
server, for a state that usually lasts seconds. So:

* a message whose words are unchanged is told again at most once per ``RETELL_SECONDS``; a message with
  other words is news, told at once;
* the PodGroup of a gang short of pods is told at once, and its pods only once the gang has stayed short
  for ``FORMING_GANG_SECONDS``.
"""

from __future__ import annotations

import re
from typing import Final

RETELL_SECONDS: Final = 30.0
FORMING_GANG_SECONDS: Final = 30.0
_NUMBERS: Final = re.compile(r"\d+")


def words(message: str) -> str:
    """The message with every number replaced by ``#``: equal words mean only counts changed."""
    return _NUMBERS.sub("#", message)
