"""Volcano's API types as pydantic models, and the well-known names (``constants``) everyone shares.

``volcano_py.api`` is the bottom layer: it imports nothing else from the package except ``resources`` and
does no I/O, so the scheduler core, the controllers, the webhooks and the CLI can all depend on it.
"""

from volcano_py.api import constants

__all__ = ["constants"]
