"""A small real trace, recorded once per session: one broker process (controller and replica manager together) on
the session's real ZooKeeper, a topic created, the broker stopped (controlled shutdown)."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot


@pytest.fixture(scope="session")
def recorded_trace(zk_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # noqa: ANN001
    """The path of broker-0.jsonl of a one-broker run that created topics ``t`` (3 partitions) and demo-doomed."""
    connect = new_chroot(zk_server.connect_string, "trace")
    base: Path = tmp_path_factory.mktemp("trace-cluster")
    trace_dir = str(base / "traces")
    lc = LocalCluster(1, zookeeper=connect, base_dir=str(base / "data"),
                      trace_dir=trace_dir, overrides=["zookeeper.session.timeout.ms=4000"])
    from kactor.trace.scenario import Scenario

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

