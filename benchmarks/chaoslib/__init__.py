"""Faults on purpose: a steady workload on the local control plane while processes die, the API goes away and
answers slowly or wrongly, and watches break; then what the API shows is checked against invariants.

``config`` (the fault kinds, the run's settings), ``driver`` (the run: set-up, the workload, the processes,
each fault's round, the teardown), ``faults`` (each fault kind without a standby, and the round a fault
makes: hit, probe, check), ``failover`` (the faults that need a standby: leaders killed or frozen),
``preemption`` (a full cluster for the eviction faults), ``final`` (the checks on the quiet cluster at the
end), ``report`` (what was found, as JSON), ``invariants`` (pure: API objects in, violations out), ``cron``
and ``flows`` (the CronJob and JobFlow invariants), ``processes`` (the scheduler and controller as child
processes, killed on a log line), ``proxy`` (a loopback TLS proxy in front of the API server that adds
latency, answers 429/5xx, cuts watches and answers 410 Gone), ``workload`` (the Jobs submitted).
``benchmarks/chaos.py`` runs it long; ``tests/chaos`` runs it short.
"""
