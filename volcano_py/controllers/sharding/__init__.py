"""NodeShards: which nodes each scheduler may use, from the sharding ConfigMap and the nodes' CPU utilisation.

The pure rules: ``rules`` (a node's utilisation and what each policy says of it), ``assign`` (the policy
pipeline per scheduler, no node in two shards) and ``handover`` (what each NodeShard should say, and when a
node may change hands). ``writes`` turns a plan into API writes; ``worker`` reads the cluster and makes them.
"""
