"""`kactor sim`'s invariant that coordinators load completely (issue #39): every load of a ``__transaction_state`` or
``__consumer_offsets`` partition in a seed, by the transaction or the group coordinator of any broker, ends with a
cache equal to what a full read of the partition's log gives, and none fails.

Observed, not hooked: the loaders (core/coordinator/transaction/transaction_state_manager.py
``load_transactions_for_partition``, core/coordinator/group/group_metadata_manager.py ``load_groups_and_offsets``) log
"Finished loading ..." at INFO the moment they install what they read, and "Error loading ..." at ERROR when a load
fails (2.6.3's loadTransactionMetadata / doLoadGroupsAndOffsets messages). `LoadChecks` is a logging handler on their
logger, ``kactor.coordinator``, raised to INFO for the seed: at "Finished loading" — the simulation is one thread, so
nothing has run since the install — it reads the broker's own replica of the partition from its log start to its log
end (what the loader was asked to read: the leader's log, which nothing appends to while its coordinator loads it)
and compares:

- transactions: every transactional id of the log (the last record of each id winning, a tombstone removing it)
  with its producer id, epoch and state, against the cache entry's; a control batch in the log means the load
  cannot be complete (it must fail, loudly);
- groups: every group of the log (its metadata record, or committed offsets without one; a transaction's offsets
  counted once its COMMIT marker is read) with its generation and committed offsets, against the groups the
  manager holds for the partition.

A load that fails is a violation, unless its log could not be read for a reason a seed injects: the broker's log dir
failed, or the partition moved away while it was read (the next election loads it again). At the end, with the
cluster settled, each internal partition's leader must have it loaded (not still loading).

The broker a record comes from is the one the simulation is delivering to: the event log's last line names it
(`Sim.deliver` appends it before the actor runs).
"""

from __future__ import annotations

import logging
from typing import Any

from actors import names
from core.coordinator.group.message_formats import (
    GroupMetadataKey,
    OffsetKey,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from core.coordinator.transaction.transaction_log import read_txn_record_key, read_txn_record_value
from core.coordinator.transaction.transaction_metadata import TransactionState
from messages.common import TopicPartition
from protocol.records import CONTROL_COMMIT, control_record_type, iter_batches, read_records
from protocol.zk import paths
from sim.client import zk_partition_leader
from sim.runtime import START_MS, Sim

LOGGER = "kactor.coordinator"
TRANSACTION_STATE = "__transaction_state"
CONSUMER_OFFSETS = "__consumer_offsets"

TxnView = dict[str, tuple[int, int, str]]  # transactional id -> (producer id, epoch, state)
GroupView = dict[str, tuple[int | None, dict[str, int]]]  # group id -> (generation or None, {partition: offset})


class LogUnreadableError(Exception):
    """The partition's log holds what no complete load can pass (a control batch in ``__transaction_state``, a
    record that does not decode)."""


def _records(log: Any) -> list[Any]:
    """Every batch of ``log`` from its log start offset to its end, in order."""
    start = log.log_start_offset
    out = []
    for segment in log.segments:
        for batch in iter_batches(segment.read(0, segment.size)):
            if batch.last_offset >= start:
                out.append(batch)
    return out


def expected_transactions(log: Any) -> TxnView:
    """The transactional ids a full read of a ``__transaction_state`` partition gives (TransactionStateManager's
    loadTransactionMetadata over the whole log)."""
    out: TxnView = {}
    for batch in _records(log):
        if batch.is_control:
            raise LogUnreadableError(f"a control batch (producer id {batch.producer_id}) at offset {batch.base_offset}")
        for r in read_records(batch):
            try:
                txn_id = read_txn_record_key(r.key or b"")
                if r.value is None:
                    out.pop(txn_id, None)
                    continue
                v = read_txn_record_value(r.value)
            except Exception as e:  # any decoding failure: the loader cannot pass it either
                raise LogUnreadableError(f"a record that does not decode at offset {batch.base_offset}: {e}") from e
            out[txn_id] = (v.producer_id, v.producer_epoch, TransactionState.from_byte(v.state_byte).name)
    return out


def cached_transactions(entry: Any) -> TxnView:
    return {t: (m.producer_id, m.producer_epoch, m.state.name) for t, m in entry.metadata_per_transactional_id.items()}


def expected_groups(log: Any) -> GroupView:
    """The groups a full read of a ``__consumer_offsets`` partition gives (GroupMetadataManager's
    doLoadGroupsAndOffsets over the whole log): metadata and committed offsets, a transaction's offsets once its
    COMMIT marker is read (dropped at an ABORT)."""
    generations: dict[str, int | None] = {}
    offsets: dict[str, dict[str, tuple[int, int]]] = {}  # group -> partition -> (batch offset, offset)
    pending: dict[int, dict[str, dict[str, tuple[int, int]]]] = {}
    for batch in _records(log):
        try:
            records = read_records(batch)
            if batch.is_control:
                done = pending.pop(batch.producer_id, {})
                if records and control_record_type(records[0].key) == CONTROL_COMMIT:
                    for group, committed in done.items():
                        mine = offsets.setdefault(group, {})
                        for tp, (at, offset) in committed.items():
                            if tp not in mine or mine[tp][0] < at:
                                mine[tp] = (at, offset)
                continue
            at = batch.base_offset + (records[0].offset_delta if records else 0)
            for r in records:
                key = read_message_key(r.key or b"")
                if isinstance(key, OffsetKey):
                    target = offsets if not batch.is_transactional else pending.setdefault(batch.producer_id, {})
                    group_offsets = target.setdefault(key.group, {})
                    if r.value is None:
                        group_offsets.pop(str(key.tp), None)
                    else:
                        group_offsets[str(key.tp)] = (at, read_offset_message_value(r.value).offset)
                elif isinstance(key, GroupMetadataKey):
                    generations[key.group] = None if r.value is None else read_group_message_value(r.value).generation
        except LogUnreadableError:
            raise
        except Exception as e:
            raise LogUnreadableError(f"a record that does not decode at offset {batch.base_offset}: {e}") from e
    out: GroupView = {}
    for group in {*generations, *offsets, *(g for p in pending.values() for g, o in p.items() if o)}:
        committed = {tp: offset for tp, (_, offset) in offsets.get(group, {}).items()}
        generation = generations.get(group)
        if generation is None and not committed and not any(p.get(group) for p in pending.values()):
            continue
        out[group] = (generation, committed)
    return out


def cached_groups(manager: Any, partition: int) -> GroupView:
    out: GroupView = {}
    for group_id, g in manager.groups.items():
        if manager.partition_for(group_id) != partition:
            continue
        # a group loaded from offsets alone is Empty at generation 0, as loadGroup builds it
        out[group_id] = (g.generation_id, {str(tp): om.offset for tp, om in g.offsets.items()})
    return out


def _same_groups(expected: GroupView, cached: GroupView) -> bool:
    if set(expected) != set(cached):
        return False
    for group, (generation, committed) in expected.items():
        cached_generation, cached_committed = cached[group]
        if committed != cached_committed or (generation is not None and generation != cached_generation):
            return False
    return True


class LoadChecks(logging.Handler):
    """The coordinators' loads, each checked as it ends (see the module)."""

    def __init__(self, sim: Sim) -> None:
        super().__init__(logging.INFO)
        self.sim = sim
        self.found: list[str] = []
        self.loads = 0  # loads seen to end (installed), for the tests and the notes
        self.excused: list[str] = []  # failed loads of a log the seed made unreadable
        self._logger = logging.getLogger(LOGGER)
        self._level = self._logger.level

    def install(self) -> LoadChecks:
        self._logger.addHandler(self)
        if not self._logger.isEnabledFor(logging.INFO):
            self._logger.setLevel(logging.INFO)
        return self

    def close(self) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)
        super().close()

    # -- the records ---------------------------------------------------------------------------------------------
    def _broker(self) -> int | None:
        """The broker being delivered to: the event log's last line is ``"<ms> b<id> <sender>><to> <Message>"``, or
        this check's own notes of failed loads after it (two coordinators' loads failing in one cascade: seed 2881's
        log dir failure)."""
        for line in self.sim.last_events():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] == "load" and parts[2].startswith("of "):
                continue
            if len(parts) < 2 or not parts[1].startswith("b") or not parts[1][1:].isdigit():
                return None
            return int(parts[1][1:])
        return None

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg if isinstance(record.msg, str) else ""
        if msg.startswith("Finished loading") or msg.startswith("Error loading"):
            try:
                self._observe(record, msg)
            except Exception as e:  # a defect of this check must not pass for a clean seed
                self.found.append(f"the load check failed on {record.getMessage()!r}: {e!r}")

    def _observe(self, record: logging.LogRecord, msg: str) -> None:
        b = self._broker()
        at = f"{self.sim.now - START_MS:.3f} ms"
        args = record.args if isinstance(record.args, tuple) else ()
        if msg.startswith("Error loading"):
            topic, partition, reason = str(args[0]), int(args[1]), str(args[-1])
            tp = TopicPartition(topic, partition)
            why = self._excuse(b, tp, reason)
            text = f"b{b}'s load of {tp} failed at {at}: {record.getMessage().split('. Nothing')[0]}"
            if why:
                self.excused.append(f"{text} ({why})")
                self.sim.note(f"load of {tp} on b{b} failed ({why})")
            else:
                self.found.append(text)
            return
        if b is None:
            return
        if "transaction metadata" in msg:
            self._transactions_loaded(b, int(args[2]), at)
        else:
            name = str(args[0])
            self._groups_loaded(b, int(name.rsplit("-", 1)[1]), at)

    def _excuse(self, b: int | None, tp: TopicPartition, reason: str) -> str:
        """Why a failed load is not a defect, or ""."""
        if b is None or not reason.startswith("reading"):
            return ""
        broker = self.sim.brokers[b]
        if broker.disk is not None and broker.disk.failed:
            return "its log dir failed"
        if zk_partition_leader(self.sim, tp) != b:
            return "the partition moved away while it was read"
        return ""

    def _log(self, b: int, tp: TopicPartition) -> Any:
        from sim.invariants import hosted_partition

        p = hosted_partition(self.sim, b, tp)
        return None if p is None else p.log

    def _transactions_loaded(self, b: int, partition: int, at: str) -> None:
        tp = TopicPartition(TRANSACTION_STATE, partition)
        rt = self.sim.brokers[b].rt
        actor = None if rt is None else rt.instances.get(names.TRANSACTION_COORDINATOR)
        entry = None if actor is None else actor.coordinator.state_manager.transaction_metadata_cache.get(partition)
        log = self._log(b, tp)
        if entry is None or log is None:
            return
        self.loads += 1
        cached = cached_transactions(entry)
        try:
            expected = expected_transactions(log)
        except LogUnreadableError as e:
            self.found.append(f"b{b} loaded {tp} at {at} ({len(cached)} transactional ids) past {e}: a partial "
                              f"cache, where the load must fail")
            return
        except OSError:
            return
        if cached != expected:
            self.found.append(f"b{b} loaded {tp} at {at} as {sorted(cached.items())}, a full read of its log gives "
                              f"{sorted(expected.items())}")

    def _groups_loaded(self, b: int, partition: int, at: str) -> None:
        tp = TopicPartition(CONSUMER_OFFSETS, partition)
        rt = self.sim.brokers[b].rt
        actor = None if rt is None else rt.instances.get(names.GROUP_COORDINATOR)
        log = self._log(b, tp)
        if actor is None or log is None:
            return
        self.loads += 1
        cached = cached_groups(actor.coordinator.manager, partition)
        try:
            expected = expected_groups(log)
        except LogUnreadableError as e:
            self.found.append(f"b{b} loaded {tp} at {at} ({len(cached)} groups) past {e}: a partial cache, where "
                              f"the load must fail")
            return
        except OSError:
            return
        if not _same_groups(expected, cached):
            self.found.append(f"b{b} loaded {tp} at {at} as {sorted(cached.items())}, a full read of its log gives "
                              f"{sorted(expected.items())}")

    # -- the invariant -------------------------------------------------------------------------------------------
    def check(self) -> list[str]:
        return list(self.found)

    def check_final(self) -> list[str]:
        """Each internal partition's leader has it loaded (the cluster settled: every broker up, every link
        healed)."""
        return self.check() + [f"{tp}: its leader b{leader}'s coordinator has not loaded it at the end"
                               for tp, leader in self._unloaded()]

    def settled(self) -> bool:
        """Whether every internal partition's leader has it loaded: the settling goes on while a new leader's
        coordinator waits for its high watermark (`await_committed`) after the faults end."""
        return not self._unloaded()

    def _unloaded(self) -> list[tuple[TopicPartition, int]]:
        """The internal partitions (and their leaders) whose leader's coordinator has not loaded them."""
        out = []
        for topic, route in ((TRANSACTION_STATE, names.TRANSACTION_COORDINATOR),
                             (CONSUMER_OFFSETS, names.GROUP_COORDINATOR)):
            if paths.TopicZNode.path(topic) not in self.sim.zk.nodes:
                continue
            tp = TopicPartition(topic, 0)
            leader = zk_partition_leader(self.sim, tp)
            rt = self.sim.brokers[leader].rt if leader >= 0 else None
            actor = None if rt is None else rt.instances.get(route)
            if actor is None:
                continue
            if topic == TRANSACTION_STATE:
                manager = actor.coordinator.state_manager
                loaded = 0 in manager.transaction_metadata_cache and not manager.is_loading(0)
            else:
                manager = actor.coordinator.manager
                loaded = 0 in manager.owned_partitions and 0 not in manager.loading_partitions
            if not loaded:
                out.append((tp, leader))
        return out
