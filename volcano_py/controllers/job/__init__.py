"""Pure logic of the Job controller: no Kopf, no client, no asyncio; dicts in, plans out."""
