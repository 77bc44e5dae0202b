"""volcano-py: a Kubernetes batch scheduler that speaks Volcano's APIs.

Layers, lowest first: ``api`` and ``resources`` < ``scheduler.framework`` < ``scheduler.plugins`` /
``scheduler.solver`` < ``scheduler.actions`` < ``scheduler.builtin`` / ``scheduler.core`` < the runtime
(``scheduler.runtime``: cache, binder, runner) < ``controllers`` / ``webhooks`` < ``cli``. The core never
performs I/O.
"""

__version__ = "0.1.0"
