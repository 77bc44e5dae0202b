"""Plugins: policies over the framework's extension points, one module each.

Each is registered in ``volcano_py.scheduler.builtin.default_registry``.
"""
