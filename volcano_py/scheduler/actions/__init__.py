"""Actions: the steps of a scheduling cycle, run in the order the conf's ``actions`` string gives,
and ``placement`` (greedy placement of one job, after any ``place_job`` plugin such as ``cpsat``)."""
