"""When new numbers in the same words are worth another API write.

While a gang's pods are being created, its explanation changes every cycle only in its counts ("valid: 3,
min: 20", then "valid: 8, min: 20"). Telling each of those as a new Event per pod and a new PodGroup
condition was most of the writes a large gang cost the API server. A message whose words are unchanged is
told again at most once per ``RETELL_SECONDS``; a message with other words is news, told at once.
"""

from __future__ import annotations

import re
from typing import Final

RETELL_SECONDS: Final = 30.0
_NUMBERS: Final = re.compile(r"\d+")


def words(message: str) -> str:
    """The message with every number replaced by ``#``: equal words mean only counts changed."""
    return _NUMBERS.sub("#", message)
