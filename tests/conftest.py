"""Shared fixtures: one real ZooKeeper per test session, a fresh chroot per test, a kazoo client bound to it, and a
small real trace recorded once per session."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

import freezegun
import pytest
from kazoo.client import KazooClient

from tests.support.kazoo_clients import kazoo_client, new_chroot
from zk_bridge.server import EmbeddedZooKeeper, ZooKeeperUnavailable, check_prerequisites

# pytest times each test phase with _pytest.timing's clocks: a test that freezes time with freezegun would otherwise
# report a setup of years in --durations (the list scripts/test prints)
freezegun.configure(extend_ignore_list=["_pytest.timing"])

# tickTime 200 ms lets the server grant sessions of 0.4–4 s, so expiry tests run in well under a second.
TEST_TICK_MS = 200


@pytest.fixture(scope="session")
def zk_server() -> Iterator[EmbeddedZooKeeper]:
    """A real standalone ZooKeeper on a free loopback port, in a temp dir, stopped at the end of the session."""
    try:
        check_prerequisites()
        server = EmbeddedZooKeeper(tick_ms=TEST_TICK_MS).start(timeout=60)
    except ZooKeeperUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        _stop_leaked_clients(server.connect_string)
        server.stop()


def _stop_leaked_clients(connect_string: str) -> None:
    """Stop kazoo clients of this server that a test left running: once the server is gone they would retry (and
    log "Connection refused") until the interpreter exits. Named, so the leak can be found and fixed."""
    import gc
    import sys

    host = connect_string.split("/")[0]
    leaked = [o for o in gc.get_objects() if isinstance(o, KazooClient) and not o._stopped.is_set()
              and any(f"{h}:{p}" == host for h, p in o.hosts)]  # kazoo has no public "started?" flag
    for client in leaked:
        client.stop()
        client.close()
    if leaked:
        print(f"\nconftest: stopped {len(leaked)} kazoo client(s) left running: "
              f"{sorted(str(c.chroot or '/') for c in leaked)}", file=sys.stderr)


@pytest.fixture
def zk_chroot(zk_server: EmbeddedZooKeeper) -> str:
    """A connect string ``127.0.0.1:PORT/t-<uuid>`` whose chroot exists and is this test's alone."""
    return new_chroot(zk_server.connect_string)


@pytest.fixture
def zk(zk_chroot: str) -> Iterator[KazooClient]:
    """A started KazooClient bound to this test's chroot; stopped and closed after the test."""
    with kazoo_client(zk_chroot) as client:
        yield client


@pytest.fixture(scope="session")
def recorded_trace(zk_server: EmbeddedZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A small real trace, recorded once per session (tests/trace, tests/messages): the path of broker-0.jsonl of a
    one-broker run (controller and replica manager together) on the session's ZooKeeper that created topics ``t``
    (3 partitions) and demo-doomed, then stopped (controlled shutdown)."""
    from kactor.cluster import LocalCluster
    from kactor.demo import Scenario

    connect = new_chroot(zk_server.connect_string, "trace")
    base: Path = tmp_path_factory.mktemp("trace-cluster")
    trace_dir = str(base / "traces")
    lc = LocalCluster(1, zookeeper=connect, base_dir=str(base / "data"),
                      trace_dir=trace_dir, overrides=["zookeeper.session.timeout.ms=4000"])
    sc = Scenario(lc, topic="t", partitions=3, say=lambda _: None)
    try:
        lc.start()
        sc.start()
        sc.create()
    finally:
        sc.close()
        lc.stop()
    files = glob.glob(os.path.join(trace_dir, "*.jsonl"))
    assert [os.path.basename(f) for f in files] == ["broker-0.jsonl"], files
    yield files[0]
