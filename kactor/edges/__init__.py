"""Edges: the threads outside the actor system that do I/O and feed results back with ``Runtime.inject``.

- `TimerEdge` ("timer"): one heap and one thread for every timer of a process.
- `Transport` ("net"): framed codec JSON over TCP between processes, plus the blocking `request` for CLI tools.

A process registers them in ``runtime.edges`` under those names; in replay they are absent and the actors that
front them (``actors.timer_actor``, ``actors.network_actor``) do nothing.
"""

from kactor.edges.timer import TimerEdge
from kactor.edges.transport import BlockingClient, ListenError, Transport, TransportError, request

__all__ = ["BlockingClient", "ListenError", "TimerEdge", "Transport", "TransportError", "request"]
