"""Admission webhooks for Volcano's kinds: defaults on the way in, and clear refusals of what cannot work.

The decisions are pure functions over the objects the API server sends (``job``, ``queue``, ``podgroup``,
``resource_groups`` for pods), taking the cluster state they need as a snapshot of the queues; ``server``
registers them with Kopf, serves them over TLS (``tls``) and installs webhook configurations
(``configurations``) scoped to our kinds only, with a short timeout, so an operator outage never blocks pods
or other workloads -- unless a volcano-admission.conf (``admission_conf_file``) asks for pods to be mutated.
"""
