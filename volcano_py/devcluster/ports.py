"""Free loopback ports for the control plane's listeners.

Several clusters may run side by side (a developer's ``dev up`` and a test session), so nothing uses a fixed
port. All ports are held open together while choosing, so one call never hands out the same port twice; the
small race between closing and the child binding is accepted (the child then fails loudly on start).
"""

from __future__ import annotations

import socket
from contextlib import ExitStack

LOOPBACK = "127.0.0.1"


def free_ports(count: int, host: str = LOOPBACK) -> list[int]:
    """``count`` distinct TCP ports on ``host`` that nothing listened on a moment ago."""
    if count < 1:
        raise ValueError(f"count={count}: ask for at least one port")
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports
