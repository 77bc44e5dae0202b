"""PodGroups for plain pods (and other workloads' pods) that name ``schedulerName: volcano``: the pure rules
(``rules``) and the worker that carries them out (``worker``)."""
