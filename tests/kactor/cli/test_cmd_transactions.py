"""kactor transactions (kafka-transactions.sh, KIP-664 as of Kafka 3.6): its tables, find-hanging's and abort's
decisions, and its error lines, over a fake AdminClient."""

from __future__ import annotations

import argparse

import pytest

from kactor.cli import CliError
from kactor.cli import cmd_transactions as ct
from kactor.cli.cmd_transactions import (
    AbortTransactionSpec,
    AdminError,
    ProducerState,
    TransactionDescription,
    TransactionListing,
)

NOW = 10_000_000
TP = ("t", 0)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    ct.register(sub)
    return parser.parse_args(["transactions", "--bootstrap-server", "127.0.0.1:9092", *argv])


class FakeAdmin:
    def __init__(self) -> None:
        self.producers: dict[tuple[str, int], list[ProducerState]] = {}
        self.listings: dict[int, list[TransactionListing]] = {}
        self.descriptions: dict[str, TransactionDescription] = {}
        self.aborted: list[AbortTransactionSpec] = []
        self.broker_partitions: list[tuple[str, int]] = []

    def list_transactions(self, producer_ids=()):
        ids = set(producer_ids)
        return {b: [t for t in ls if not ids or t.producer_id in ids] for b, ls in self.listings.items()}

    def describe_transaction(self, txn_id):
        if txn_id not in self.descriptions:
            raise AdminError("The transactionalId could not be found.", 105)
        return self.descriptions[txn_id]

    def partitions(self, topics, broker_id):
        return self.broker_partitions

    def describe_producers(self, tps, broker_id=None):
        return {tp: self.producers.get(tp, []) for tp in tps}

    def abort_transaction(self, spec):
        self.aborted.append(spec)


def run(admin: FakeAdmin, *argv: str) -> list[str]:
    args = parse(*argv)
    lines: list[str] = []
    ct.COMMANDS[args.command](admin, args, lines.append, NOW)
    return lines


def open_txn(pid: int, start: int, last_ts: int, epoch: int = 0, coordinator_epoch: int = 3) -> ProducerState:
    return ProducerState(pid, epoch, 4, last_ts, coordinator_epoch, start)


def test_describe_producers_prints_kafkas_columns_padded_and_tab_ended():
    admin = FakeAdmin()
    admin.producers[TP] = [open_txn(1000, 5, 1234), ProducerState(7, 2, 9, 99, -1, -1)]
    lines = run(admin, "describe-producers", "--topic", "t", "--partition", "0")
    assert lines == [
        "ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\t"
        "CurrentTransactionStartOffset\t",
        "1000      \t0            \t3                     \t4           \t1234         \t"
        "5                            \t",
        "7         \t2            \t-1                    \t9           \t99           \t"
        "None                         \t",
    ]


def test_list_and_describe():
    admin = FakeAdmin()
    admin.listings = {1: [TransactionListing("tx-a", 1000, "Ongoing")], 2: []}
    assert run(admin, "list") == ["TransactionalId\tCoordinator\tProducerId\tTransactionState\t",
                                  "tx-a           \t1          \t1000      \tOngoing         \t"]
    admin.descriptions["tx-a"] = TransactionDescription(1, "Ongoing", 1000, 0, 60000, NOW - 500, (("t", 0), ("u", 2)))
    lines = run(admin, "describe", "--transactional-id", "tx-a")
    assert lines[1].split("\t")[:9] == ["1            ", "tx-a           ", "1000      ", "0            ",
                                        "Ongoing         ", "60000               ",
                                        str(NOW - 500).ljust(len("CurrentTransactionStartTimeMs")),
                                        "500".ljust(len("TransactionDurationMs")), "t-0,u-2        "]
    with pytest.raises(CliError) as e:
        run(admin, "describe", "--transactional-id", "nope")
    assert str(e.value) == ("Failed to describe transaction state of transactional-id `nope`: The transactionalId "
                            "could not be found.. Enable debug logging for additional detail.")


def test_find_hanging_lists_an_open_transaction_its_coordinator_does_not_hold():
    """The produce to a partition never added to the transaction (verification off): the partition holds pid 1000's
    transaction open, the coordinator's transaction (long committed) does not list the partition — hanging. Pid 2000's
    partition is in its coordinator's transaction: not hanging; pid 3000's is recent: not a candidate."""
    admin = FakeAdmin()
    admin.broker_partitions = [("t", 0), ("t", 1), ("t", 2)]
    old = NOW - 20 * 60000
    admin.producers = {("t", 0): [open_txn(1000, 7, old)], ("t", 1): [open_txn(2000, 3, old)],
                       ("t", 2): [open_txn(3000, 1, NOW - 1000)]}
    admin.listings = {1: [TransactionListing("tx-a", 1000, "CompleteCommit"),
                          TransactionListing("tx-b", 2000, "Ongoing")]}
    admin.descriptions = {"tx-a": TransactionDescription(1, "CompleteCommit", 1000, 0, 60000, -1, ()),
                          "tx-b": TransactionDescription(1, "Ongoing", 2000, 0, 60000, old, (("t", 1),))}
    lines = run(admin, "find-hanging", "--broker-id", "1")
    assert [c.strip() for c in lines[0].split("\t")[:-1]] == list(ct.HANGING_HEADERS)
    assert len(lines) == 2
    assert [c.strip() for c in lines[1].split("\t")[:-1]] == ["t", "0", "1000", "0", "3", "7", str(old), "20"]
    # a producer id no transactional id has is hanging too, and --max-transaction-timeout 0 takes the recent one
    admin.listings = {}
    lines = run(admin, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")
    assert [line.split("\t")[2].strip() for line in lines[1:]] == ["1000", "2000", "3000"]


def test_abort_by_start_offset_aborts_that_producers_transaction():
    admin = FakeAdmin()
    admin.producers[TP] = [open_txn(1000, 7, 5, epoch=2, coordinator_epoch=-1), open_txn(2000, 9, 5)]
    assert run(admin, "abort", "--topic", "t", "--partition", "0", "--start-offset", "7") == []
    # a coordinator epoch the producer never had (-1) is sent as 0
    assert admin.aborted == [AbortTransactionSpec("t", 0, 1000, 2, 0)]
    with pytest.raises(CliError) as e:
        run(admin, "abort", "--topic", "t", "--partition", "0", "--start-offset", "8")
    assert str(e.value) == "Could not find any open transactions starting at offset 8 on partition t-0"


def test_abort_with_the_pre_3_0_arguments_and_its_usage_errors():
    admin = FakeAdmin()
    run(admin, "abort", "--topic", "t", "--partition", "0", "--producer-id", "5", "--producer-epoch", "1",
        "--coordinator-epoch", "4")
    assert admin.aborted == [AbortTransactionSpec("t", 0, 5, 1, 4)]
    for argv, message in (
            ((), "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or "
                 "above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)"),
            (("--producer-id", "5"), "Missing required argument --producer-epoch"),
            (("--producer-id", "5", "--producer-epoch", "1"), "Missing required argument --coordinator-epoch")):
        with pytest.raises(CliError) as e:
            run(admin, "abort", "--topic", "t", "--partition", "0", *argv)
        assert str(e.value) == message


def test_find_hanging_needs_a_scope():
    with pytest.raises(CliError) as e:
        run(FakeAdmin(), "find-hanging")
    assert "requires either --topic or --broker-id" in str(e.value)
    with pytest.raises(CliError) as e:
        run(FakeAdmin(), "find-hanging", "--broker-id", "1", "--partition", "0")
    assert str(e.value) == "The --partition argument requires --topic to be provided"
