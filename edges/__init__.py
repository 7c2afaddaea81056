"""Edges: the threads and process-wide facilities outside the actor system; I/O happens here and results come back
to the actors with ``Runtime.inject``.

- `edges.timer.TimerEdge` ("timer"): one heap and one thread for every timer of a process.
- `edges.transport.Transport` ("net"): Kafka's protocol over TCP — the broker's listeners and the process's own
  requests — plus the blocking `request` for CLI tools; a facade over the thin layers of `edges.net` (selector loop,
  framing, inbound dispatch, outbound client, blocking client); `edges.net_faults` is its fault point for
  `kactor chaos`.
- `edges.trace_writer.TraceWriter`: the process's trace (the runtime records every received message into it).
- `edges.metrics_http.MetricsEdge`: the Prometheus endpoint.
- `edges.gc_policy`: the process's garbage-collection policy; `edges.malloc_policy` its allocator's.
- `edges.children`: child processes bound to their parent's life (PDEATHSIG and a janitor).

A broker process (``kactor.broker_process``) creates them and registers them with its runtime; in replay they are
absent and the actors that front them (``actors.timer_actor``, ``actors.network_actor``) do nothing. Nothing is
imported here eagerly, so a process that only needs `edges.children` does not load the transport.
"""
