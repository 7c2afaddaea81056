"""LogManager.maxPidExpirationMs (issue #39): every log of a broker forgets an idle producer after the broker's
``transactional.id.expiration.ms``, as Kafka 2.6.3's LogManager hands ``config.transactionalIdExpirationMs`` to each
Log, not after a fixed 7 days; the setting reaches the partitions' LogManager through ReplicaManagerInit."""

from __future__ import annotations

from core.broker.log_manager import LogManager
from core.broker.producer_state import PRODUCER_ID_EXPIRATION_MS
from kactor.config import build_config
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import TopicPartition
from protocol.records import Record, build_batch

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000


def _idempotent_batch(pid: int, ts: int) -> bytes:
    return build_batch([Record(0, 0, None, b"v")], first_timestamp=ts, producer_id=pid, producer_epoch=0,
                       base_sequence=0)


def test_an_idle_producer_is_forgotten_after_the_managers_expiration(tmp_path) -> None:
    manager = LogManager([str(tmp_path / "d")], max_pid_expiration_ms=60_000)
    log = manager.get_or_create_log(TP, is_new=True)
    log.append_as_leader(_idempotent_batch(7, T0), 0, T0)
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments(T0 + 59_999)
    assert 7 in log.producer_state.producers
    log.delete_old_segments(T0 + 60_000)  # a fixed 7 days kept it
    assert 7 not in log.producer_state.producers
    manager.close()


def test_a_reopened_log_keeps_the_managers_expiration(tmp_path) -> None:
    manager = LogManager([str(tmp_path / "d")], max_pid_expiration_ms=60_000)
    manager.get_or_create_log(TP, is_new=True).append_as_leader(_idempotent_batch(7, T0), 0, T0)
    manager.close()
    reopened = LogManager([str(tmp_path / "d")], max_pid_expiration_ms=60_000).get_log(TP)
    assert reopened is not None and reopened.max_producer_id_expiration_ms == 60_000


def test_the_default_is_transactional_id_expiration_ms_default(tmp_path) -> None:
    assert LogManager([str(tmp_path / "d")]).max_pid_expiration_ms == PRODUCER_ID_EXPIRATION_MS == 604_800_000


def test_the_broker_config_reaches_the_replica_manager_init() -> None:
    cfg = build_config({"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181",
                        "transactional.id.expiration.ms": "60000"})
    assert ReplicaManagerInit.from_kafka_config(cfg).transactional_id_expiration_ms == 60_000
    default = build_config({"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181"})
    assert ReplicaManagerInit.from_kafka_config(default).transactional_id_expiration_ms == 604_800_000


def test_a_partition_shard_builds_its_log_manager_with_the_setting(tmp_path) -> None:
    from actors.partition_actor import PartitionActor
    from messages.partition import ShardInit
    from tests.support.actors import ActorTestbed, ZooKeeperModel

    bed = ActorTestbed("broker-0", start_ms=1_000_000.0, sinks=("net", "timer", "metrics", "replica-manager"))
    try:
        bed.rt.spawn(ZooKeeperModel, "zk")
        bed.rt.spawn(PartitionActor, "partition-0")
        init = ReplicaManagerInit(0, (str(tmp_path / "logs"),), transactional_id_expiration_ms=60_000)
        bed.deliver("partition-0", ShardInit(0, 1, init), "replica-manager", at_ms=1_000_000.0)
        assert bed.rt.instances["partition-0"].rm.log_manager.max_pid_expiration_ms == 60_000
    finally:
        bed.shutdown()
