"""A new transaction coordinator acts only on committed __transaction_state records (`await_committed`, beyond
Kafka): it loads to the log end, then waits for the high watermark to reach it before installing what it read.

Sim seed 4864 is the case: the previous coordinator appended T's AddPartitionsToTxn and died before replicating it;
the new one loaded it (2.6.3 reads to the log end), passed a partition's verification on it, and died too; the next
leader never had the record, so its InitProducerId bumped the epoch without aborting T, and the data T wrote under the
old epoch was committed by the next transaction's markers."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from core.coordinator.coordinator_loader import AwaitHighWatermark
from core.coordinator.transaction.transaction_metadata import TransactionState
from messages.common import Errors
from protocol.records import iter_batches
from tests.core.coordinator.transaction.harness import T0, T1, TXN, Harness

S = TransactionState


@pytest.fixture
def frozen():
    with freeze_time("2026-01-01 00:00:00") as f:
        yield f


def _uncommitted_add(frozen) -> tuple[Harness, int, int]:
    """TXN's transaction holding T0 (committed records), then its AddPartitionsToTxn of T1 appended by the old
    coordinator but never replicated: the high watermark is the offset of that last record."""
    old = Harness()
    old.elect()
    init = old.init()
    pid, epoch = init.producer_id, init.producer_epoch
    old.add(pid, epoch, T0)
    committed_end = old.leo(old.partition)
    old.add(pid, epoch, T1)
    assert old.metadata().topic_partitions == {T0, T1}
    return old, pid, committed_end


def test_a_load_waits_for_the_high_watermark_before_answering_from_what_it_read(frozen):
    old, pid, committed_end = _uncommitted_add(frozen)
    new = Harness(log=old.log, zk=old.zk)
    new.high_watermark[new.partition] = committed_end
    new.elect(epoch=6)

    # loaded to the log end, but nothing is acted on while the last record is above the high watermark
    [(_, waiting)] = new.awaiting
    assert waiting == AwaitHighWatermark(new.partition, committed_end)
    assert new.metadata() is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert new.init().error is Errors.COORDINATOR_LOAD_IN_PROGRESS

    # one follower fetch later the high watermark has not reached the end: still waiting, from where it got to
    new.replicate(new.partition, committed_end)
    [(_, waiting)] = new.awaiting
    assert waiting.offset == committed_end
    assert new.metadata() is Errors.COORDINATOR_LOAD_IN_PROGRESS

    new.replicate(new.partition)  # the followers have the record: it is committed
    assert new.awaiting == []
    assert new.metadata().state is S.ONGOING
    assert new.metadata().topic_partitions == {T0, T1}
    assert new.metadata().producer_id == pid


def test_a_coordinator_that_dies_before_the_record_commits_never_answered_from_it(frozen):
    old, pid, committed_end = _uncommitted_add(frozen)
    new = Harness(log=old.log, zk=old.zk)
    new.high_watermark[new.partition] = committed_end
    new.elect(epoch=6)
    assert new.add_error(pid, 0, T1) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    new.resign(epoch=6)
    new.replicate(new.partition, committed_end)  # the wait returns after the resignation: nothing is installed
    assert new.metadata() is Errors.NOT_COORDINATOR

    # the next leader's log ends at the high watermark: the AddPartitionsToTxn of T1 is gone with the dead broker
    data = bytes(old.log[old.partition])
    log = {old.partition: bytearray(b"".join(b.raw for b in iter_batches(data) if b.base_offset < committed_end))}
    last = Harness(log=log, zk=old.zk)
    last.elect(epoch=7)
    assert last.metadata().state is S.ONGOING
    assert last.metadata().topic_partitions == {T0}  # as every replica that survived says
    # the producer's fence aborts what it holds, T0 (T1 was never in the transaction on any answer given)
    assert last.init(TXN).error is Errors.CONCURRENT_TRANSACTIONS
    assert last.metadata().state is S.PREPARE_ABORT
    assert {tp for s in last.sent for m in s.markers for tp in m.partitions} == {T0}
