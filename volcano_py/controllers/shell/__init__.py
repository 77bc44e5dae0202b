"""The operator's imperative shell: Kopf watches and indexes, work queues, and the writes plans ask for."""
