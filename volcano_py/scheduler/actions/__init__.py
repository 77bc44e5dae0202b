"""Actions: the steps of a scheduling cycle, run in the order the conf's ``actions`` string gives."""
