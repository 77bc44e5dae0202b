"""What every controller kind shares at run time: the Kopf registration (``handlers``), the work queues, the
context the workers read and write through, and the controller's metrics. Each kind's own worker lives in
its folder (``job/worker.py``, ``flow/worker.py``, ``queue/worker.py``, ``hypernode/worker.py``,
``podgroup/worker.py``) beside its pure rules."""
