"""The group coordinator's actor on a real Runtime: requests in as NetRequest, answers out as NetReply to "net", its
__consumer_offsets appends and reads as LocalRequest to a replica-manager stand-in with an in-memory log, its timers
through "timer", FindCoordinator and startup through the in-memory ZooKeeper."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from actors.base import KActor
from actors.clock import ManualClock
from actors.group_coordinator_actor import GroupCoordinatorActor
from actors.runtime import Runtime
from core.api import registry
from core.api.metadata import handle_metadata_request
from core.broker.metadata_cache import MetadataCache
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.group.message_formats import group_metadata_key
from messages.common import Broker, EndPoint, Errors, ReplicaAssignment, TopicPartition
from messages.group import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    GroupCoordinatorConfig,
    GroupCoordinatorInit,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from messages.metadata import MetadataRequest
from messages.net import NetReply, NetRequest
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    LeadershipChange,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    LocalReply,
    LocalRequest,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
)
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from messages.runtime import ScheduleTimer, TimerFired
from protocol.records import assign_offsets, iter_batches, read_records
from protocol.zk import znodes
from tests.support.actors import ZooKeeperModel

TOPIC = "__consumer_offsets"
CONFIG = GroupCoordinatorConfig(offsets_topic_num_partitions=3, offsets_topic_replication_factor=1,
                                group_initial_rebalance_delay_ms=100)  # one broker, as server.properties sets it


class Recorder(KActor):
    def on_start(self) -> None:
        self.received: list[Any] = []

    def on_unhandled(self, body: Any, sender: str) -> None:
        self.received.append(body)


class ReplicaManagerModel(KActor):
    """Answers LocalRequest as the replica manager would for a leader of every __consumer_offsets partition."""

    def on_start(self) -> None:
        self.logs: dict[int, bytearray] = {}
        self.requests: list[Any] = []
        self.hold = False
        self.held: list[LocalRequest] = []
        self.log_start = 0
        self.verify_error = Errors.NONE  # a verify-only produce's answer
        self.cache = MetadataCache(1)  # what UpdateMetadata told this broker

    def on_LocalRequest(self, msg: LocalRequest, sender: str) -> None:
        self.requests.append(msg.body)
        if self.hold:
            self.held.append(msg)
        else:
            self.answer(msg)

    def answer(self, msg: LocalRequest) -> None:
        body = msg.body
        if isinstance(body, MetadataRequest):
            self.post(msg.reply_to, LocalReply(msg.token, handle_metadata_request(self.cache, body)))
        elif isinstance(body, ProduceRequest) and body.verify_only:  # a TxnOffsetCommit's verification: verified
            (p,) = body.partitions
            self.post(msg.reply_to, LocalReply(msg.token, ProduceResponse((ProducePartitionResponse(
                p.tp, self.verify_error),))))
        elif isinstance(body, ProduceRequest):
            (p,) = body.partitions
            data = self.logs.setdefault(p.tp.partition, bytearray())
            buf = bytearray(p.records)
            base = self.leo(p.tp.partition)
            assign_offsets(buf, 0, base)
            data += buf
            self.post(msg.reply_to, LocalReply(msg.token, ProduceResponse((ProducePartitionResponse(
                p.tp, Errors.NONE, base),))))
        elif isinstance(body, ListOffsetsRequest):  # EARLIEST: the log start
            (q,) = body.partitions
            self.post(msg.reply_to, LocalReply(msg.token, ListOffsetsResponse((ListOffsetsPartitionResponse(
                q.tp, Errors.NONE, -1, self.log_start),))))
        else:
            (fp,) = body.partitions
            data = bytes(self.logs.get(fp.tp.partition, b""))
            leo = self.leo(fp.tp.partition)  # every record replicated: the high watermark is the log end
            self.post(msg.reply_to, LocalReply(msg.token, FetchResponse((FetchPartitionData(
                fp.tp, Errors.NONE, leo, leo, 0, data, leo),))))

    def leo(self, partition: int) -> int:
        batches = list(iter_batches(bytes(self.logs.get(partition, b""))))
        return batches[-1].base_offset + batches[-1].last_offset_delta + 1 if batches else 0


@pytest.fixture
def rt():
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    for name in ("net", "timer"):
        rt.spawn(Recorder, name)
    rt.spawn(ReplicaManagerModel, "replica-manager")
    rt.spawn(ZooKeeperModel, "zk")
    zk = rt.instances["zk"].zk.create_top_level_paths()
    zk.create("/brokers/ids/1", znodes.encode_broker(Broker(1, (EndPoint("127.0.0.1", 9092),)), timestamp_ms=1))
    rt.spawn(GroupCoordinatorActor, "group-coordinator")
    yield rt
    rt.shutdown()


def _request(rt: Runtime, request_id: int, body: Any) -> None:
    rt.deliver("group-coordinator", NetRequest(7, request_id, body, True, 4, "cli", "/127.0.0.1"), "edge:net")


def _replies(rt: Runtime) -> dict[int, Any]:
    return {m.request_id: m.body for m in rt.instances["net"].received if isinstance(m, NetReply)}


def _fire_join_timers(rt: Runtime) -> None:
    for t in [m for m in rt.instances["timer"].received if isinstance(m, ScheduleTimer) and m.key.startswith("join")]:
        rt.instances["timer"].received.remove(t)
        rt.deliver("group-coordinator", TimerFired(t.key), "edge:timer")


def test_find_coordinator_creates_the_topic_then_answers_the_leader(rt):
    rt.deliver("group-coordinator", GroupCoordinatorInit(1, CONFIG), "edge:process")
    _request(rt, 1, FindCoordinatorRequest("g", 0, "PLAINTEXT"))
    assert _replies(rt)[1] == FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    zk = rt.instances["zk"].zk
    assert znodes.decode_topic_assignment(TOPIC, zk.get(f"/brokers/topics/{TOPIC}")) == {
        TopicPartition(TOPIC, p): ReplicaAssignment((1,)) for p in range(3)}
    tp = TopicPartition(TOPIC, partition_for("g", 3))
    zk.put_partition_state(tp, 1, (1,))
    # the leader is named once this broker's metadata cache has it (UpdateMetadata), not when ZooKeeper has it
    _request(rt, 2, FindCoordinatorRequest("g", 0, "PLAINTEXT"))
    assert _replies(rt)[2] == FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    assert rt.instances["replica-manager"].requests[-1] == MetadataRequest((TOPIC,), False, "PLAINTEXT")
    rt.instances["replica-manager"].cache.maybe_update(UpdateMetadataRequest(
        1, 1, 1, (UpdateMetadataPartitionState(tp, 1, 1, 0, (1,), 0, (1,)),),
        (Broker(1, (EndPoint("127.0.0.1", 9092),)),)))
    _request(rt, 3, FindCoordinatorRequest("g", 0, "PLAINTEXT"))
    assert _replies(rt)[3] == FindCoordinatorResponse(Errors.NONE, 1, "127.0.0.1", 9092)


def test_a_group_forms_its_metadata_goes_to_the_log_and_a_resignation_ends_it(rt):
    rt.deliver("group-coordinator", GroupCoordinatorInit(1, CONFIG), "edge:process")
    p = partition_for("g", 3)
    _request(rt, 1, JoinGroupRequest("g", 10000, 30000, "", "consumer", (JoinGroupProtocol("range", b"s"),)))
    assert _replies(rt)[1].error is Errors.NOT_COORDINATOR
    rm = rt.instances["replica-manager"]
    rm.hold = True
    rt.deliver("group-coordinator", LeadershipChange(((p, 0),), ()), "replica-manager")
    # the load reads the log start first (Log.logStartOffset), then the log from there
    assert rm.requests == [ListOffsetsRequest(DEBUGGING_REPLICA_ID, 0, (ListOffsetsPartition(TopicPartition(TOPIC, p),
                                                                                             -2),))]
    rm.log_start = 7
    rm.answer(rm.held.pop())  # delivered with the next input
    _request(rt, 2, JoinGroupRequest("g", 10000, 30000, "", "consumer", (JoinGroupProtocol("range", b"s"),)))
    assert _replies(rt)[2].error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert rm.requests[1:] == [FetchRequest(DEBUGGING_REPLICA_ID, rm.requests[1].partitions, max_bytes=5242880)]
    assert (rm.requests[1].partitions[0].tp, rm.requests[1].partitions[0].fetch_offset) == (TopicPartition(TOPIC, p), 7)
    rm.hold = False
    rm.answer(rm.held.pop())  # an empty log: loaded
    _request(rt, 3, JoinGroupRequest("g", 10000, 30000, "", "consumer", (JoinGroupProtocol("range", b"s"),),
                                      None, False, "cli", "/127.0.0.1"))
    assert 3 not in _replies(rt)  # the initial rebalance delay
    _fire_join_timers(rt)
    joined = _replies(rt)[3]
    assert (joined.error, joined.generation_id, joined.leader == joined.member_id) == (Errors.NONE, 1, True)
    _request(rt, 4, SyncGroupRequest("g", 1, joined.member_id, (SyncGroupAssignment(joined.member_id, b"a"),)))
    assert (_replies(rt)[4].error, _replies(rt)[4].assignment) == (Errors.NONE, b"a")
    produce = rm.requests[-1]
    assert (produce.acks, produce.timeout_ms, produce.partitions[0].tp) == (-1, 5000, TopicPartition(TOPIC, p))
    ((key, value),) = [(r.key, r.value) for b in iter_batches(bytes(rm.logs[p])) for r in read_records(b)]
    assert key == group_metadata_key("g") and value[:2] == b"\x00\x03"
    _request(rt, 5, HeartbeatRequest("g", 1, joined.member_id))
    assert _replies(rt)[5].error is Errors.NONE
    rt.deliver("group-coordinator", LeadershipChange((), ((p, 1),)), "replica-manager")
    _request(rt, 6, HeartbeatRequest("g", 1, joined.member_id))
    assert _replies(rt)[6].error is Errors.NOT_COORDINATOR
    # elected again: the group comes back from the log, Stable, with its member
    rt.deliver("group-coordinator", LeadershipChange(((p, 2),), ()), "replica-manager")
    _request(rt, 7, HeartbeatRequest("g", 1, joined.member_id))
    assert _replies(rt)[7].error is Errors.NONE


def test_before_its_init_every_request_gets_coordinator_not_available(rt):
    _request(rt, 1, HeartbeatRequest("g", 1, "m"))
    assert _replies(rt)[1].error is Errors.COORDINATOR_NOT_AVAILABLE


def test_a_failed_append_fails_the_commit_and_nothing_is_committed(rt):
    from messages.group import OffsetCommitPartition, OffsetCommitRequest, OffsetFetchRequest

    rt.deliver("group-coordinator", GroupCoordinatorInit(1, CONFIG), "edge:process")
    p = partition_for("g", 3)
    rt.deliver("group-coordinator", LeadershipChange(((p, 0),), ()), "replica-manager")
    rm = rt.instances["replica-manager"]
    rm.hold = True
    tp = TopicPartition("t", 0)
    _request(rt, 1, OffsetCommitRequest("g", (OffsetCommitPartition(tp, 9),)))
    (held,) = rm.held
    rt.deliver("group-coordinator", LocalReply(held.token, ProduceResponse((ProducePartitionResponse(
        TopicPartition(TOPIC, p), Errors.NOT_LEADER_OR_FOLLOWER),))), "replica-manager")
    assert _replies(rt)[1].partitions[0].error is Errors.NOT_COORDINATOR
    _request(rt, 2, OffsetFetchRequest("g", (tp,)))
    assert _replies(rt)[2].partitions[0].offset == -1


def test_a_request_whose_procedure_fails_is_answered_unknown_server_error(rt, monkeypatch):
    def broken(coordinator: Any, request: Any, reply_to: str) -> Any:
        raise ValueError("a bug")
        yield

    spec = registry.unit_of(HeartbeatRequest("g", 1, "m"))
    monkeypatch.setitem(registry._UNITS, HeartbeatRequest,
                        attrs.evolve(spec, service=attrs.evolve(spec.service, handle=broken)))
    _request(rt, 1, HeartbeatRequest("g", 1, "m"))
    assert _replies(rt)[1].error is Errors.UNKNOWN_SERVER_ERROR


def test_answers_parked_in_a_rebalance_go_to_their_own_connection_and_request(rt):
    """Each request's answer reaches the connection and request it came on (its ReplyHandle), also when two
    connections use the same request id and both answers are parked until the rebalance completes."""
    rt.deliver("group-coordinator", GroupCoordinatorInit(1, CONFIG), "edge:process")
    rt.deliver("group-coordinator", LeadershipChange(((partition_for("g", 3), 0),), ()), "replica-manager")
    for connection_id, client in ((7, "a"), (8, "b")):
        rt.deliver("group-coordinator", NetRequest(connection_id, 1, JoinGroupRequest(
            "g", 10000, 30000, "", "consumer", (JoinGroupProtocol("range", b"s"),), None, False, client,
            "/127.0.0.1"), True, 4, client, "/127.0.0.1"), "edge:net")
    assert not [m for m in rt.instances["net"].received if isinstance(m, NetReply)]  # the initial rebalance delay
    _fire_join_timers(rt)  # a member joined during the delay: InitialDelayedJoin waits once more
    _fire_join_timers(rt)
    answers = {(m.connection_id, m.request_id): m.body for m in rt.instances["net"].received
               if isinstance(m, NetReply)}
    assert sorted(answers) == [(7, 1), (8, 1)]
    assert answers[(7, 1)].member_id.startswith("a-") and answers[(8, 1)].member_id.startswith("b-")
    assert {a.error for a in answers.values()} == {Errors.NONE} and answers[(7, 1)].generation_id == 1


def test_txn_offsets_are_the_coordinators_transactional_append_and_complete_on_txn_markers_written(rt):
    """TxnOffsetCommit goes to the log as the coordinator's own append (origin Coordinator: the producer's epoch is
    checked, its sequence is not) of a transactional batch of the producer; the offsets stay invisible until the
    replica manager's TxnMarkersWritten for their partition: COMMIT makes them the group's, ABORT drops them."""
    from messages.group import OffsetCommitPartition, OffsetFetchRequest, TxnOffsetCommitRequest
    from messages.txn_markers import TxnMarkersWritten

    rt.deliver("group-coordinator", GroupCoordinatorInit(1, CONFIG), "edge:process")
    p = partition_for("g", 3)
    rt.deliver("group-coordinator", LeadershipChange(((p, 0),), ()), "replica-manager")
    rm = rt.instances["replica-manager"]
    tp = TopicPartition("t", 0)

    def committed(request_id: int) -> tuple[int, Errors]:
        _request(rt, request_id, OffsetFetchRequest("g", (tp,), require_stable=request_id % 2 == 0))
        (data,) = _replies(rt)[request_id].partitions
        return data.offset, data.error

    _request(rt, 1, TxnOffsetCommitRequest("tx", "g", 42, 3, (OffsetCommitPartition(tp, 9),)))
    assert _replies(rt)[1].partitions[0].error is Errors.NONE
    verify, produce = rm.requests[-2:]
    # KIP-890 (3.7): the transaction verified first, the append naming that verification's token
    assert (verify.verify_only, verify.coordinator, verify.transactional_id) == (True, True, "tx")
    (header,) = iter_batches(verify.partitions[0].records)
    assert (header.producer_id, header.producer_epoch, header.is_transactional) == (42, 3, True)
    assert (produce.coordinator, produce.acks, produce.verify_only) == (True, -1, False)
    assert (produce.transactional_id, produce.verification_token) == ("tx", verify.verification_token)
    (batch,) = iter_batches(bytes(rm.logs[p]))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.is_transactional) == (42, 3, 0, True)
    assert committed(3) == (-1, Errors.NONE)
    assert committed(4) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)  # require_stable: the client waits for the marker
    rt.deliver("group-coordinator", TxnMarkersWritten(42, True, (p + 1,)), "replica-manager")  # another partition
    assert committed(5) == (-1, Errors.NONE)
    rt.deliver("group-coordinator", TxnMarkersWritten(42, True, (p,)), "replica-manager")
    assert committed(7) == (9, Errors.NONE) and committed(8) == (9, Errors.NONE)
    _request(rt, 9, TxnOffsetCommitRequest("tx", "g", 42, 4, (OffsetCommitPartition(tp, 20),)))
    rt.deliver("group-coordinator", TxnMarkersWritten(42, False, (p,)), "replica-manager")
    assert committed(11) == (9, Errors.NONE)
