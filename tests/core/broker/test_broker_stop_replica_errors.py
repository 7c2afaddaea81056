"""KafkaApis.handleStopReplicaRequest's error shapes (Kafka 2.6; reference Corrections 10): a stale broker epoch is
answered with the top-level error and no partition errors, and nothing is stopped."""

from __future__ import annotations

from messages.common import Errors, TopicPartition
from tests.support.broker import drive, lai_request, lai_state, make_rm, stop_request

TP0 = TopicPartition("foo", 0)
T0 = 1_000_000.0


def test_stale_broker_epoch_stop_replica_has_no_partition_errors(tmp_path):
    rm = make_rm(tmp_path)
    rm.broker_epoch = 100
    drive(rm.handle_leader_and_isr(lai_request((lai_state(TP0, 0, 0, [0], [0], is_new=True),)), T0))
    resp = drive(rm.handle_stop_replica(stop_request(((TP0, -2, True),), broker_epoch=99), T0))
    assert resp.error == Errors.STALE_BROKER_EPOCH
    assert resp.partition_errors == ()
    assert rm.get_partition(TP0) is not None  # not stopped, not deleted
    resp = drive(rm.handle_stop_replica(stop_request(((TP0, -2, True),), broker_epoch=100), T0))
    assert resp.error == Errors.NONE
    assert [(pe.topic_partition, pe.error) for pe in resp.partition_errors] == [(TP0, Errors.NONE)]
    assert rm.get_partition(TP0) is None
