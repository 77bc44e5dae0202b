"""The scheduler process: the imperative shell around the pure core (``volcano_py.scheduler.core``).

``cache`` (list+watch mirror with assumed binds) -> ``cycle`` (snapshot, ``run_session``, warnings) ->
``binder`` (gang binds, evictions, status writes, off the session path); ``runner`` drives them every period
under leader election (``run_scheduler``).
"""
