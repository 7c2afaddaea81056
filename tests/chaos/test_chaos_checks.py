"""kactor/chaos/checks.py on hand-made histories: a clean one passes, and each invariant has a history that breaks
exactly it."""

from __future__ import annotations

from kactor.chaos.checks import (
    check_data,
    check_duplicates,
    check_safety,
    check_server_errors,
    client_resends,
    stuck_operations,
)
from kactor.chaos.history import (
    Ack,
    ClusterSnapshot,
    ErrorAnswer,
    FinalPartition,
    PartitionSample,
    Read,
    Sample,
    Violation,
)

TP = ("t", 0)
R = frozenset({0, 1, 2})


def sample(ts: float, leader: int, epoch: int, isr: tuple[int, ...], controller_epoch: int | None = 1,
           replicas: frozenset[int] = R) -> Sample:
    return Sample(ts, controller_epoch, {TP: PartitionSample(leader, epoch, isr, replicas)})


CLEAN = [sample(0.0, 0, 0, (0, 1, 2)), sample(0.2, 0, 0, (0, 1)), sample(0.4, 1, 1, (1,), 2),
         sample(0.6, -1, 2, (1,), 2), sample(0.8, 1, 3, (1, 2), 3)]


def test_clean_history_has_no_safety_violation() -> None:
    assert check_safety(CLEAN) == []
    assert check_safety([]) == []


def test_two_leaders_in_one_leader_epoch() -> None:
    history = [*CLEAN[:3], sample(0.5, 2, 1, (1, 2), 2)]
    assert check_safety(history) == [Violation("safety", "t-0: two leaders in leader epoch 1: 1 and 2 at 0.500")]


def test_leader_epoch_going_back() -> None:
    history = [*CLEAN, sample(1.0, 1, 1, (1, 2), 3)]
    assert check_safety(history) == [Violation("safety", "t-0: leader epoch went back 3 -> 1 at 1.000")]


def test_controller_epoch_going_back() -> None:
    history = [*CLEAN, sample(1.0, 1, 3, (1, 2), 2)]
    assert check_safety(history) == [Violation("safety", "controller epoch went back 3 -> 2 at 1.000")]


def test_leader_outside_isr_unless_unclean_is_allowed() -> None:
    history = [sample(0.0, 2, 0, (0, 1))]
    assert check_safety(history) == [Violation("safety", "t-0: leader 2 not in ISR [0, 1] (epoch 0) at 0.000")]
    assert check_safety(history, unclean_topics={"t"}) == []


def test_isr_outside_replicas() -> None:
    history = [sample(0.0, 0, 0, (0, 3))]
    assert check_safety(history) == [
        Violation("safety", "t-0: ISR [0, 3] has [3] outside the replicas [0, 1, 2] (epoch 0) at 0.000")]


def test_same_broken_state_sampled_twice_is_one_violation() -> None:
    s = sample(0.0, 0, 0, (0, 3))
    assert len(check_safety([s, s])) == 1


# -- data --------------------------------------------------------------------------------------------------------
ACKS = [Ack("t", 0, 0, "a"), Ack("t", 0, 1, "b"), Ack("gone", 0, 0, "x")]  # "gone" was deleted: not in final
FINAL = {TP: FinalPartition((0, 1), (0, 1))}


def test_clean_data() -> None:
    logs = {(0, TP): ("a", "b", "c"), (1, TP): ("a", "b", "c")}
    hws = {(0, TP): 3, (1, TP): 2}
    assert check_data(ACKS, FINAL, logs, hws, [Read("t", 0, 2, "c", "a consumer")]) == []
    # a replica beyond the high watermark may hold anything (not committed)
    assert check_data(ACKS, FINAL, {(0, TP): ("a", "b", "x"), (1, TP): ("a", "b", "y")}, {(0, TP): 2}) == []


def test_acknowledged_record_missing_on_an_isr_replica() -> None:
    logs = {(0, TP): ("a", "b"), (1, TP): ("a",)}
    found = check_data(ACKS, FINAL, logs, {(0, TP): 2})
    assert found == [Violation("lost", "t-0: acknowledged 'b' at offset 1 is missing on ISR replica 1 (log of 1)"),
                     Violation("lost", "t-0: ISR replica 1 holds 1 records, below the high watermark 2")]


def test_acknowledged_record_at_another_offset_is_divergent() -> None:
    logs = {(0, TP): ("a", "z", "b"), (1, TP): ("a", "z", "b")}
    found = check_data(ACKS, FINAL, logs, {(0, TP): 3})
    assert Violation("divergent", "t-0: acknowledged 'b' at offset 1, replica 0 has 'z' there") in found
    assert Violation("divergent", "t-0: offset 1 read as 'b' (the producer's ack) and as 'z' (broker 0's log)") \
        in found


def test_replicas_differing_below_the_high_watermark() -> None:
    logs = {(0, TP): ("a", "b", "c"), (1, TP): ("a", "b", "d")}
    found = check_data([], FINAL, logs, {(0, TP): 3})
    assert found[0] == Violation("divergent", "t-0: replicas 0 and 1 differ at offset 2 ('c' vs 'd'), below the "
                                              "high watermark 3")


def test_an_offset_read_with_two_values() -> None:
    reads = [Read("t", 0, 5, "v1", "a consumer at 3.0s"), Read("t", 0, 5, "v2", "a consumer at 9.0s")]
    assert check_data([], {}, {}, {}, reads) == [
        Violation("divergent", "t-0: offset 5 read as 'v1' (a consumer at 3.0s) and as 'v2' (a consumer at 9.0s)")]


def test_no_log_at_all_on_an_isr_replica() -> None:
    found = check_data([Ack("t", 0, 0, "a")], FINAL, {(0, TP): ("a",)}, {(0, TP): 1})
    assert Violation("lost", "t-0: acknowledged 'a' at offset 0 is missing on ISR replica 1 (log of 0)") in found
    # an empty partition whose replicas never made a log loses nothing (liveness's write probe catches it)
    assert check_data([], FINAL, {}, {}) == []


# -- duplicates ------------------------------------------------------------------------------------------------
def test_no_duplicates_in_clean_logs_and_reads() -> None:
    logs = {(0, TP): ("a", "b", "c"), (1, TP): ("a", "b", "c")}
    assert check_duplicates(FINAL, logs, [Read("t", 0, 1, "b", "a consumer"), Read("t", 0, 1, "b", "again")]) == []
    assert check_duplicates({}, {}) == []


def test_a_record_written_twice_is_one_duplicate() -> None:
    # a retry appended "b" again at offset 2, on both ISR replicas: one duplicate, not one per replica
    logs = {(0, TP): ("a", "b", "b", "c"), (1, TP): ("a", "b", "b", "c")}
    assert check_duplicates(FINAL, logs) == [Violation("duplicate", "t-0: 'b' at offsets 1, 2 (broker 0's log)")]
    # a replica outside the ISR is not looked at
    assert check_duplicates({TP: FinalPartition((1,), (0, 1))}, {(0, TP): ("a", "a"), (1, TP): ("a",)}) == []


def test_a_duplicate_the_consumer_read_in_a_topic_deleted_since() -> None:
    reads = [Read("gone", 0, 0, "x", "a consumer at 3.0s"), Read("gone", 0, 4, "x", "a consumer at 9.0s")]
    assert check_duplicates({}, {}, reads) == [
        Violation("duplicate", "gone-0: 'x' at offsets 0, 4 (the consumer's reads)")]


def test_a_record_three_times_is_two_duplicates() -> None:
    found = check_duplicates(FINAL, {(0, TP): ("a", "a", "b", "a"), (1, TP): ("a", "a", "b", "a")})
    assert len(found) == 2 and {v.kind for v in found} == {"duplicate"}


def test_a_record_the_producer_re_sent_under_a_new_epoch_is_not_a_duplicate() -> None:
    """librdkafka#4953: "b" written under producer 7's epoch 0, then re-sent by the client from sequence 0 under
    epoch 1 after an OUT_OF_ORDER_SEQUENCE_NUMBER. Not the broker's duplicate, from the logs or the reads; the same
    value twice under one epoch, or from two producers, still is."""
    logs = {(0, TP): ("a", "b", "b", "c"), (1, TP): ("a", "b", "b", "c")}
    producers = {(b, TP): ((7, 0), (7, 0), (7, 1), (7, 1)) for b in (0, 1)}
    reads = [Read("t", 0, 1, "b", "a consumer"), Read("t", 0, 2, "b", "a consumer")]
    assert client_resends(FINAL, logs, producers) == {TP: {"b": [1, 2]}}
    assert check_duplicates(FINAL, logs, reads, client_resends(FINAL, logs, producers)) == []
    assert check_duplicates(FINAL, logs, reads) == [Violation("duplicate", "t-0: 'b' at offsets 1, 2 (broker 0's log)")]
    one_epoch = {(b, TP): ((7, 0),) * 4 for b in (0, 1)}
    assert check_duplicates(FINAL, logs, (), client_resends(FINAL, logs, one_epoch)) == [
        Violation("duplicate", "t-0: 'b' at offsets 1, 2 (broker 0's log)")]
    two_producers = {(b, TP): ((7, 0), (7, 0), (8, 0), (8, 0)) for b in (0, 1)}
    assert client_resends(FINAL, logs, two_producers) == {}
    not_idempotent = {(b, TP): ((-1, -1),) * 4 for b in (0, 1)}
    assert len(check_duplicates(FINAL, logs, (), client_resends(FINAL, logs, not_idempotent))) == 1


# -- UNKNOWN_SERVER_ERROR answers ------------------------------------------------------------------------------
def test_each_unknown_server_error_answer_is_a_violation() -> None:
    answers = [ErrorAnswer(12.34, "the producer", "Produce to t-0: UNKNOWN: Unknown broker error"),
               ErrorAnswer(None, "broker 1's log", "no actor 'replica-manager' for Produce")]
    assert check_server_errors(answers) == [
        Violation("server-error", "the producer at 12.3s: Produce to t-0: UNKNOWN: Unknown broker error"),
        Violation("server-error", "broker 1's log: no actor 'replica-manager' for Produce")]
    assert check_server_errors([]) == []


# -- liveness ----------------------------------------------------------------------------------------------------
def test_stuck_operations() -> None:
    assert stuck_operations(ClusterSnapshot()) == []
    snap = ClusterSnapshot(pending_deletions=("d",), deleted_still_present=("d", "e"),
                           reassignment_pending=(("r", 0),), reassigning=(("r", 0), ("r", 1)),
                           leaderless=(("l", 2),), election_pending=True, unwritable=(("l", 2), ("w", 0)))
    assert [v.detail for v in stuck_operations(snap)] == [
        "deletion of d not complete (/admin/delete_topics/d)",
        "deleted topic e still in /brokers/topics",
        "reassignment of r-0 not complete (/admin/reassign_partitions)",
        "r-1 still has adding/removing replicas",
        "l-2 has no leader",
        "w-0 accepts no acks=all write",
        "preferred replica election not complete (/admin/preferred_replica_election)"]
    assert {v.kind for v in stuck_operations(snap)} == {"stuck"}
