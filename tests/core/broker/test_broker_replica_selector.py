"""KIP-392: the replica selectors (ports of Kafka's RackAwareReplicaSelectorTest) and the leader naming a preferred read
replica to a consumer (ports of ReplicaManagerTest's testPreferredReplicaAsLeader / testPreferredReplicaAsFollower /
testDefaultReplicaSelector / testUnknownReplicaSelector / testFetchFollowerNotAllowedForOlderClients), with
Kafka 2.6.3's rules: only the leader names one, for a consumer's Fetch v11+, among the replicas holding the fetch
offset, and answers it without reading."""

from __future__ import annotations

import attrs
import pytest

from core.broker.config import BrokerSideConfig
from core.broker.replica_manager import ReplicaManager
from core.broker.replica_selector import (
    LEADER_SELECTOR,
    RACK_AWARE_SELECTOR,
    ClientMetadata,
    LeaderSelector,
    PartitionView,
    RackAwareReplicaSelector,
    ReplicaView,
    replica_selector_for,
)
from kactor.records import read_values, values_batch
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.replication import INITIAL_EPOCH, FetchPartition, FetchRequest
from messages.requests import UpdateMetadataRequest
from tests.support.broker import drive, emitted, lai_request, lai_state, produce_request, um_state

TP = TopicPartition("foo", 0)
T0 = 1_000_000.0
RACKS = {0: "r0", 1: "r1", 2: "r2"}


# ------------------------------------------------------------------------------------- RackAwareReplicaSelectorTest

def _view(broker_id: int, rack: str, leo: int, lag: int) -> ReplicaView:
    return ReplicaView(broker_id, rack, leo, lag)


REPLICAS = (_view(0, "rack-a", 4, 0), _view(1, "rack-a", 2, 5), _view(2, "rack-b", 3, 3), _view(3, "rack-b", 4, 2))
PARTITION = PartitionView(REPLICAS, REPLICAS[0])


def test_same_rack_selection():
    """RackAwareReplicaSelectorTest.testSameRackSelection: rack-b → replica 3 (more caught up than 2); a rack no
    replica has → the leader; the leader's own rack → the leader."""
    selector = RackAwareReplicaSelector()
    assert selector.select(TP, ClientMetadata("rack-b"), PARTITION) == REPLICAS[3]
    assert selector.select(TP, ClientMetadata("not-a-rack"), PARTITION) == REPLICAS[0]
    assert selector.select(TP, ClientMetadata("rack-a"), PARTITION) == REPLICAS[0]


def test_empty_rack_selection():
    """RackAwareReplicaSelectorTest.testEmptyRackSelection: a client without a rack gets the leader."""
    assert RackAwareReplicaSelector().select(TP, ClientMetadata(""), PARTITION) == REPLICAS[0]


def test_most_caught_up_ties_break_on_time_since_caught_up():
    """ReplicaView.comparator(): equal log end offsets → the one caught up most recently."""
    replicas = (_view(0, "a", 9, 0), _view(1, "b", 5, 700), _view(2, "b", 5, 20))
    assert RackAwareReplicaSelector().select(TP, ClientMetadata("b"), PartitionView(replicas, replicas[0])) \
        == replicas[2]


def test_leader_selector_always_answers_the_leader():
    assert LeaderSelector().select(TP, ClientMetadata("rack-b"), PARTITION) == REPLICAS[0]


def test_selector_class_names_are_kafkas_and_an_unknown_one_is_refused():
    """testDefaultReplicaSelector / testUnknownReplicaSelector: unset → no selector; Kafka's class names → theirs;
    any other → an error naming it (Kafka: ClassNotFoundException at start-up)."""
    assert replica_selector_for(None) is None
    assert isinstance(replica_selector_for(RACK_AWARE_SELECTOR), RackAwareReplicaSelector)
    assert isinstance(replica_selector_for(LEADER_SELECTOR), LeaderSelector)
    with pytest.raises(ValueError, match="Class com.example.Nope cannot be found"):
        replica_selector_for("com.example.Nope")


# ----------------------------------------------------------------------------------------- ReplicaManagerTest (v11)

def _racked_metadata(live=(0, 1, 2)) -> UpdateMetadataRequest:
    brokers = tuple(Broker(b, (EndPoint(f"host{b}", 9092 + b),), RACKS[b]) for b in live)
    return UpdateMetadataRequest(0, 0, -1, (um_state(TP, 0, [0, 1, 2], [0, 1, 2]),), brokers)


def _rm(tmp_path, broker_id=0, selector: str | None = RACK_AWARE_SELECTOR, live=(0, 1, 2)) -> ReplicaManager:
    rm = ReplicaManager(BrokerSideConfig(broker_id, (str(tmp_path / f"b{broker_id}"),),
                                         replica_selector_class=selector), 0)
    drive(rm.handle_update_metadata(_racked_metadata(live), 0))
    return rm


def _leader_with_caught_up_followers(tmp_path, **kw) -> ReplicaManager:
    """Broker 0 leads foo-0 (replicas 0,1,2, racks r0,r1,r2) with 3 records, both followers caught up to offset 3."""
    rm = _rm(tmp_path, **kw)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0, 1, 2], [0, 1, 2], is_new=True)]), T0))
    drive(rm.handle_produce(produce_request(TP, "a", "b", "c"), T0, "producer"))
    for follower in (1, 2):
        drive(rm.handle_fetch(FetchRequest(follower, (FetchPartition(TP, 3, 1),)), T0 + 10))
    assert rm.online_partition(TP).high_watermark == 3
    return rm


def _consumer(rack: str, offset: int = 0, v11: bool = True, epoch: int = 1, **kw) -> FetchRequest:
    return FetchRequest(-1, (FetchPartition(TP, offset, epoch),), rack_id=rack, client_metadata=v11, **kw)


def _fetch(rm, request, now=T0 + 20):
    (data,) = drive(rm.handle_fetch(request, now, "consumer")).partitions
    return data


def test_preferred_replica_as_leader_names_the_clients_rack(tmp_path):
    """testPreferredReplicaAsLeader with the rack-aware selector: a consumer in r2 fetching from the leader (r0) is
    answered no records, the leader's offsets and preferred_read_replica 2; the read is skipped."""
    rm = _leader_with_caught_up_followers(tmp_path)
    data = _fetch(rm, _consumer("r2"))
    assert (data.error, data.records, data.preferred_read_replica) == (Errors.NONE, b"", 2)
    assert (data.high_watermark, data.last_stable_offset, data.log_start_offset) == (3, 3, 0)


def test_preferred_replica_as_leader_is_none_for_the_leaders_rack_or_no_rack(tmp_path):
    """testPreferredReplicaAsLeader: the selector answering the leader means no preferred replica (-1 on the wire),
    and the records are read as before; so for a rack no replica has."""
    rm = _leader_with_caught_up_followers(tmp_path)
    for rack in ("r0", "", "elsewhere"):
        data = _fetch(rm, _consumer(rack))
        assert (data.preferred_read_replica, read_values(data.records)) == (-1, ("a", "b", "c")), rack


def test_a_follower_that_lacks_the_fetch_offset_is_not_preferred(tmp_path):
    """findPreferredReadReplica keeps only followers with log start ≤ fetch offset ≤ log end offset: a consumer in
    r2 asking for offset 3 while follower 2 has fetched only to 1 reads from the leader."""
    rm = _rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0, 1, 2], [0, 1, 2], is_new=True)]), T0))
    drive(rm.handle_produce(produce_request(TP, "a", "b", "c", "d"), T0, "producer"))
    drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(TP, 4, 1),)), T0 + 10))
    drive(rm.handle_fetch(FetchRequest(2, (FetchPartition(TP, 1, 1),)), T0 + 10))
    at_3 = _fetch(rm, _consumer("r2", offset=3))
    assert (at_3.preferred_read_replica, read_values(at_3.records)) == (-1, ())  # HW is 1: nothing readable yet
    assert _fetch(rm, _consumer("r2", offset=1)).preferred_read_replica == 2
    assert _fetch(rm, _consumer("r1", offset=3)).preferred_read_replica == 1


def test_a_dead_preferred_broker_is_not_named(tmp_path):
    """getPartitionReplicaEndpoints lists alive brokers only: with broker 2 not alive, r2 reads the leader."""
    rm = _leader_with_caught_up_followers(tmp_path)
    drive(rm.handle_update_metadata(attrs.evolve(_racked_metadata((0, 1)), controller_epoch=0), T0 + 15))
    data = _fetch(rm, _consumer("r2"))
    assert (data.preferred_read_replica, read_values(data.records)) == (-1, ("a", "b", "c"))


def test_no_preferred_replica_without_selector_or_client_metadata_or_for_a_follower(tmp_path):
    """testDefaultReplicaSelector (no replica.selector.class: none named), a Fetch below v11 (no ClientMetadata),
    and a follower's fetch (replication never asks the selector) all read from the leader."""
    plain = _leader_with_caught_up_followers(tmp_path / "plain", selector=None)
    assert plain.replica_selector is None
    assert _fetch(plain, _consumer("r2")).preferred_read_replica == -1
    rm = _leader_with_caught_up_followers(tmp_path / "racked")
    old = _fetch(rm, _consumer("r2", v11=False))
    assert (old.preferred_read_replica, read_values(old.records)) == (-1, ("a", "b", "c"))
    (follower,) = drive(rm.handle_fetch(attrs.evolve(FetchRequest(2, (FetchPartition(TP, 0, 1),)), rack_id="r2"),
                                        T0 + 20)).partitions
    assert (follower.preferred_read_replica, read_values(follower.records)) == (-1, ("a", "b", "c"))


def test_preferred_replica_as_follower_is_none_and_the_follower_serves(tmp_path):
    """testPreferredReplicaAsFollower: a consumer's v11 fetch to a follower is served (up to the follower's HW) and
    the follower names no preferred replica, whatever the client's rack."""
    rm = _rm(tmp_path, broker_id=2)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0, 1, 2], [0, 1, 2], is_new=True)]), T0))
    log = rm.online_partition(TP).log
    log.append_as_follower(b"".join(values_batch([v], 0, base_offset=i, leader_epoch=1)
                                    for i, v in enumerate(["a", "b"])))
    log.update_high_watermark(2)
    for rack in ("r0", "r1", "r2"):
        data = _fetch(rm, _consumer(rack))
        assert (data.error, data.preferred_read_replica, read_values(data.records)) == (Errors.NONE, -1,
                                                                                          ("a", "b")), rack


def test_a_stale_leader_epoch_is_fenced_before_a_replica_is_preferred(tmp_path):
    """fetchOffsetSnapshot(currentLeaderEpoch) checks the epoch: an old epoch gets FENCED_LEADER_EPOCH."""
    rm = _leader_with_caught_up_followers(tmp_path)
    data = _fetch(rm, _consumer("r2", epoch=0))
    assert (data.error, data.preferred_read_replica) == (Errors.FENCED_LEADER_EPOCH, -1)


def test_a_redirecting_fetch_is_answered_at_once_not_parked(tmp_path):
    """A consumer at the log end with max_wait: the preferred read replica is answered at once (nothing will be
    read here for it), as 2.6's DelayedFetch would on its first tryComplete once the leader has data past the
    offset; without a selector the same fetch parks in the purgatory."""
    rm = _leader_with_caught_up_followers(tmp_path)
    data = _fetch(rm, _consumer("r2", offset=3, max_wait_ms=500, min_bytes=1))
    assert (data.preferred_read_replica, data.high_watermark) == (2, 3)
    assert rm.delayed_fetch_count == 0
    plain = _leader_with_caught_up_followers(tmp_path / "plain", selector=None)
    assert drive(plain.handle_fetch(_consumer("r2", offset=3, max_wait_ms=500, min_bytes=1), T0, "c")) is None
    assert plain.delayed_fetch_count == 1


def test_an_incremental_session_answers_the_preferred_replica_every_time(tmp_path):
    """CachedPartition.maybeUpdateResponseData: a partition with a preferred read replica is always in an
    incremental response, even with nothing else new (a consumer still asking the leader is told again)."""
    rm = _leader_with_caught_up_followers(tmp_path)
    full = drive(rm.handle_fetch(_consumer("r2", session_epoch=INITIAL_EPOCH), T0 + 20, "c"))
    assert [d.preferred_read_replica for d in full.partitions] == [2]
    again = drive(rm.handle_fetch(FetchRequest(-1, (), session_id=full.session_id, session_epoch=1, rack_id="r2",
                                               client_metadata=True), T0 + 30, "c"))
    assert [(d.tp, d.preferred_read_replica) for d in again.partitions] == [(TP, 2)]


def test_follower_fetch_with_a_selector_forces_no_hw_propagation(tmp_path):
    """testFollowerFetchWithDefaultSelectorNoForcedHwPropagation (the part kactor shares): a follower fetching at
    the log end with min_bytes it cannot have parks in the purgatory even with a replica selector configured, and
    its answer after max_wait carries the high watermark. (kactor's first answer to a follower already carries the
    high watermark its own fetch moved; Kafka's carries the one read before the update.)"""
    rm = _rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0, 1], [0, 1, 2], is_new=True)]), T0))
    drive(rm.handle_produce(produce_request(TP, "a", "b"), T0, "producer"))
    follower = FetchRequest(1, (FetchPartition(TP, 2, 1),), max_wait_ms=1000, min_bytes=1000)
    effects: list = []
    assert drive(rm.handle_fetch(follower, T0 + 10, "follower-1"), None, effects) is None
    assert rm.delayed_fetch_count == 1
    drive(rm.expire_delayed_operations(T0 + 1011), None, effects)
    (answer,) = emitted(effects, "follower-1")
    assert [(d.error, d.high_watermark, d.preferred_read_replica) for d in answer.partitions] == [
        (Errors.NONE, 2, -1)]


def test_become_follower_while_a_new_client_fetch_is_in_purgatory(tmp_path):
    """testBecomeFollowerWhileNewClientFetchInPurgatory: a consumer's v11 fetch (epoch 1) parked on the leader is
    answered FENCED_LEADER_EPOCH when the broker becomes a follower at epoch 2 (it may read a follower, so the
    re-read fails on the epoch, not on leadership)."""
    rm = _rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0, 1], [0, 1], is_new=True)]), T0))
    effects: list = []
    assert drive(rm.handle_fetch(_consumer("", max_wait_ms=10, min_bytes=1), T0, "consumer"), None, effects) is None
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 1, 2, [0, 1], [0, 1])]), T0 + 1), None, effects)
    (answer,) = emitted(effects, "consumer")
    assert [d.error for d in answer.partitions] == [Errors.FENCED_LEADER_EPOCH]
