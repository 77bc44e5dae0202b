"""An offline, discrete-event simulator that drives the real scheduling Session with a fake clock.

Jobs arrive (from a synthetic generator or the Alibaba openb trace), the same ``run_session`` the scheduler
process runs decides every period, bound pods run for their job's duration and finish, and the simulator
reports GPU allocation over time, stranded GPUs, queueing delay and job completion time. Nothing here touches
the network: it is how placement policies (greedy binpack versus CP-SAT) are compared on equal footing.

Modules: ``workload`` (what arrives), ``cluster`` (the objects a session sees, as Kubernetes dicts),
``engine`` (the event loop), ``report`` (metrics, JSON and a short table).
"""
