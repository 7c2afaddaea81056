"""A command-line tool starts without the wire protocol unless it speaks it: reading ``ssl.*`` settings
(kactor/config.py, edges/net/tls_context.py) loaded every API's schema (core.api) until the TLS contexts left
edges/net/tls.py, which doubled the CPU of starting `kactor topics` (0.96 → 0.51 s a start), and kafka_wire loads
the request codecs only when it sends a request (`kactor configs --help`: 0.87 → 0.42 s; `reassign-partitions`:
0.98 → 0.39 s; medians of 3, load 2.5-3.5)."""

from __future__ import annotations

import subprocess
import sys


def _loaded(module: str, probe: str) -> bool:
    code = f"import sys, {module}; print({probe!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.strip() == "True"


def test_the_configuration_and_the_zookeeper_tools_do_not_load_the_wire_protocol() -> None:
    assert not _loaded("kactor.config", "core.api")
    assert not _loaded("kactor.cli.kafka_support", "core.api")
    assert not _loaded("kactor.admin.topics", "core.api")
    # the --bootstrap-server halves of configs and reassign-partitions load it only when they send a request
    assert not _loaded("kactor.cli.cmd_configs", "core.api")
    assert not _loaded("kactor.cli.cmd_reassign_partitions", "protocol.framing")


def test_the_tls_connections_still_bring_the_network_edge() -> None:
    assert _loaded("edges.net.tls", "edges.net.selector")
