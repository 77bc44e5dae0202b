"""Pure logic of the Queue controller: state transitions, hierarchy, counters."""
