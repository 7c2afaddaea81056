"""The data-path benches' kactor target (bench/data_path.py KactorTarget) at a tiny size, on one 3-broker cluster
with a real ZooKeeper: librdkafka's acks=all records to an RF 3 topic all come back to a consumer, in order, with
their bytes; a latency round trip reads back the record just acknowledged; the CPU is counted per process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.data_path import KactorTarget, consume_run, produce_run, warm_up
from bench.e2e_latency import TOPIC as LATENCY_TOPIC
from bench.e2e_latency import latency_run

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def kactor() -> Iterator[KactorTarget]:
    t = KactorTarget()
    t.start()
    try:
        yield t
    finally:
        t.stop()


def test_kactor_takes_acks_all_records_and_gives_every_one_back(kactor: KactorTarget) -> None:
    value = bytes(range(256)) * 4
    kactor.create_topic("smoke", 3)
    assert kactor.leaders("smoke") == {0: 0, 1: 1, 2: 2}
    warm_up(kactor.bootstrap, "smoke", 3)
    produced = produce_run(kactor.bootstrap, "smoke", 3000, 60.0, kactor.pids(), value, track_ends=True)
    assert produced.records == 3000 and produced.errors == []
    ends = {p: produced.ends.get(p, 1) for p in range(3)}
    assert sum(ends.values()) == 3003
    assert set(produced.cpu) == {"client", "broker 0", "broker 1", "broker 2", "zookeeper", "others"}
    read = consume_run(kactor.bootstrap, "smoke", ends, kactor.pids(),
                       check=lambda _p, off, v: v == (b"warm-up" if off == 0 else value))
    assert read.records == 3003 and read.out_of_order == 0


def test_kactor_latency_round_trips(kactor: KactorTarget) -> None:
    kactor.create_topic(LATENCY_TOPIC, 1)
    warm_up(kactor.bootstrap, LATENCY_TOPIC, 1)
    run = latency_run(kactor.bootstrap, 5, b"x" * 1024, warm_up=1)
    assert len(run.e2e_ms) == 5 and len(run.ack_ms) == 5  # each record read back (latency_run raises otherwise)
