"""The transaction coordinator's load of a __transaction_state partition never installs part of it
(TransactionStateManager.loadTransactionMetadata): a batch it cannot read — a control batch, as a client's
AddPartitionsToTxn(__transaction_state) once had the coordinator write, or a record of an unknown version — or a
read that fails leaves the partition loading (COORDINATOR_LOAD_IN_PROGRESS), logged at ERROR with the partition and
offset and counted, until its next election loads it again."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from freezegun import freeze_time

from core.coordinator.coordinator_loader import LogRead, LogStart
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_log import key_to_bytes, records_batch
from core.coordinator.transaction.transaction_metadata import TransactionState
from core.coordinator.transaction.transaction_state_manager import ReadTxnLog, ReadTxnLogStart
from messages.common import Errors
from messages.transaction import InitProducerIdResponse
from protocol.records import (
    CONTROL_ABORT,
    EndTransactionMarker,
    assign_offsets,
    build_end_txn_marker_batch,
    iter_batches,
)
from tests.core.coordinator.transaction.harness import PARTITIONS, T0, Harness

S = TransactionState
TXN_STATE = "__transaction_state"


@pytest.fixture
def frozen():
    with freeze_time("2026-01-01 00:00:00") as f:
        yield f


def _same_partition_id(h: Harness) -> str:
    return next(f"v{i}" for i in range(1000) if partition_for(f"v{i}", PARTITIONS) == h.partition)


def _append_raw(h: Harness, batch: bytes) -> int:
    """``batch`` appended to TXN's partition as the leader would (offsets assigned); its offset."""
    offset = h.leo(h.partition)
    buf = bytearray(batch)
    assign_offsets(buf, 0, offset)
    h.log.setdefault(h.partition, bytearray()).extend(buf)
    return offset


def _poisoned_log(frozen: Any) -> tuple[Harness, str, int]:
    """TXN's transaction, then an ABORT marker in its own __transaction_state partition (what kactor's coordinator
    wrote before AddPartitionsToTxn refused internal topics), then another id's open transaction after it."""
    h = Harness()
    h.elect()
    h.init()
    h.add(0, 0, T0)
    marker_at = _append_raw(h, build_end_txn_marker_batch(0, 0, EndTransactionMarker(CONTROL_ABORT, 5), 0))
    victim = _same_partition_id(h)
    h.init(victim)
    h.add(1, 0, T0, txn_id=victim)
    return h, victim, marker_at


def test_a_control_batch_leaves_the_partition_loading_with_nothing_installed(frozen, caplog):
    h, victim, marker_at = _poisoned_log(frozen)
    loaded = Harness(log=h.log, zk=h.zk)
    with caplog.at_level(logging.ERROR, logger="kactor.coordinator"):
        loaded.elect(epoch=6)
    # neither the id before the marker nor the one after it: no partial cache
    assert loaded.metadata() is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert loaded.metadata(victim) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert loaded.init(victim) == InitProducerIdResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    assert loaded.tc.state_manager.is_loading(h.partition)
    assert loaded.tc.state_manager.partition_load_errors == 1
    (error,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert f"{TXN_STATE}-{h.partition} at offset {marker_at}" in error.getMessage()
    assert "control batch" in error.getMessage()
    # nothing is aborted while the partition loads, and no marker is sent
    loaded.advance(frozen, 60000)
    assert loaded.sent == [] and loaded.appends == []


def test_a_partition_whose_load_failed_is_loaded_again_at_its_next_election(frozen):
    h, victim, marker_at = _poisoned_log(frozen)
    loaded = Harness(log=h.log, zk=h.zk)
    loaded.elect(epoch=6)
    assert loaded.metadata(victim) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    loaded.resign(epoch=6)
    assert loaded.metadata(victim) is Errors.NOT_COORDINATOR
    # the marker is gone (an operator rewrote the log): the next election loads every id
    data = bytes(h.log[h.partition])
    h.log[h.partition] = bytearray(b"".join(b.raw for b in iter_batches(data) if b.base_offset != marker_at))
    loaded.elect(epoch=7)
    assert loaded.metadata().state is S.ONGOING
    assert loaded.metadata(victim).state is S.ONGOING
    assert loaded.tc.state_manager.partition_load_errors == 1


def test_a_record_of_an_unknown_key_version_fails_the_load(frozen, caplog):
    h = Harness()
    h.elect()
    h.init()
    bad_at = _append_raw(h, records_batch([(b"\x00\x07" + key_to_bytes("x")[2:], None)], 0))
    h.init(_same_partition_id(h))
    loaded = Harness(log=h.log, zk=h.zk)
    with caplog.at_level(logging.ERROR, logger="kactor.coordinator"):
        loaded.elect(epoch=6)
    assert loaded.metadata() is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert any(f"at offset {bad_at}" in r.getMessage() and "Unknown version 7" in r.getMessage()
               for r in caplog.records if r.levelno == logging.ERROR)


class _FailingReads(Harness):
    """A replica manager that answers the loader's reads (or its log start) with an error."""

    def __init__(self, *args: Any, read_error: Errors = Errors.NONE, start_error: Errors = Errors.NONE,
                 **kw: Any) -> None:
        self.read_error, self.start_error = read_error, start_error
        super().__init__(*args, **kw)

    def _io(self, effect: Any) -> Any:
        if isinstance(effect, ReadTxnLog) and self.read_error is not Errors.NONE:
            return LogRead(self.read_error)
        if isinstance(effect, ReadTxnLogStart) and self.start_error is not Errors.NONE:
            return LogStart(self.start_error)
        return super()._io(effect)


@pytest.mark.parametrize("errors", [{"read_error": Errors.KAFKA_STORAGE_ERROR},
                                    {"start_error": Errors.KAFKA_STORAGE_ERROR}])
def test_a_read_that_fails_leaves_the_partition_loading(frozen, errors):
    h = Harness()
    h.elect()
    h.init()
    loaded = _FailingReads(log=h.log, zk=h.zk, **errors)
    loaded.elect(epoch=6)
    assert loaded.metadata() is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert loaded.tc.state_manager.partition_load_errors == 1
