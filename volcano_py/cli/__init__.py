"""Command-line entry points: ``volcano-py`` (our commands) and ``vcctl`` (Volcano's CLI)."""
