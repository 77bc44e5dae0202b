"""Faults on purpose: a steady workload on the local control plane while processes die, the API goes away and
answers slowly or wrongly, and watches break; then what the API shows is checked against invariants.

``invariants`` (pure: API objects in, violations out), ``proxy`` (a loopback TLS proxy in front of the API
server that adds latency, answers 429/5xx, cuts watches and answers 410 Gone), ``driver`` (the workload, the
processes, the faults and the figures). ``benchmarks/chaos.py`` runs it long; ``tests/chaos`` runs it short.
"""
