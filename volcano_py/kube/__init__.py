"""The imperative shell's Kubernetes layer: one raw JSON client, informers, leader election, events, patches.

Everything here speaks plain camelCase dicts, exactly as the API server sends them, so the scheduler core can
read the same objects the simulator and the tests build, and nothing pays for model (de)serialisation.
"""
