"""A command-line tool starts without the wire protocol unless it speaks it: reading ``ssl.*`` settings
(kactor/config.py, edges/net/tls_context.py) loaded every API's schema (core.api) until the TLS contexts left
edges/net/tls.py, which doubled the CPU of starting `kactor topics` (0.96 → 0.51 s a start)."""

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


def test_the_tls_connections_still_bring_the_network_edge() -> None:
    assert _loaded("edges.net.tls", "edges.net.selector")
