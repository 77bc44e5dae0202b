"""The agent scheduler's pure parts: its scheduling queue, the rule that finds a placement that lost a race
for a node's room, what it reads of pods and watch events, and its conf. The process is
``scheduler/runtime/agent.py``; the decisions are the batch scheduler's own sessions (``scheduler.core``)."""
