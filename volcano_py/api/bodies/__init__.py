"""Typed reads of each kind's ``spec`` and ``status``, one module per kind: the one place that knows where a
field sits in the wire form and what an absent one means (Volcano's defaults, from ``api/``'s enums and
constants). Metadata is read through ``api/objects``; bodies are still built as dicts, through the helpers
here where one exists. A malformed value the reader must refuse raises ``ValueError`` naming the field; the
caller adds which object it was.
"""
