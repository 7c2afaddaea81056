"""``kactor transactions``: Kafka's kafka-transactions.sh (KIP-664, Kafka 3.0; tools' TransactionsCommand as of 3.6)
through Kafka's protocol: ``list``, ``describe --transactional-id``, ``describe-producers --topic --partition
[--broker-id]``, ``find-hanging (--broker-id | --topic [--partition]) [--max-transaction-timeout MINUTES]`` and
``abort --topic --partition (--start-offset | --producer-id --producer-epoch --coordinator-epoch)``, with Kafka's
columns (ToolsUtils.prettyPrintTable: each column padded to its widest cell, then a tab).

The requests are the ones Kafka's AdminClient sends: ListTransactions (66) to every broker, FindCoordinator (type
TRANSACTION) then DescribeTransactions (65) to the coordinator, DescribeProducers (61) to the partition's leader (or
the broker asked for), and for ``abort`` a WriteTxnMarkers ABORT of the one partition to its leader
(AbortTransactionSpec: what KafkaAdminClient.abortTransaction sends). A hanging transaction (one a partition holds
open that its coordinator does not list for that partition) stalls every read_committed reader of the partition;
``abort`` ends it there, and the readers read on. Failures are Kafka's one line, exit 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from kactor.cli import CliError
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, kafka_errors, servers

TIMEOUT_S = 30.0
MAX_BATCH_SIZE = 500  # FindHangingTransactionsCommand.MAX_BATCH_SIZE
# api keys and the versions sent (Kafka 3.6's AdminClient; WriteTxnMarkers at 2.6's v0)
METADATA = (3, 9)
FIND_COORDINATOR = (10, 2)
WRITE_TXN_MARKERS = (27, 0)
DESCRIBE_PRODUCERS = (61, 0)
DESCRIBE_TRANSACTIONS = (65, 0)
LIST_TRANSACTIONS = (66, 0)
COORDINATOR_TYPE_TRANSACTION = 1
RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
TRANSACTIONAL_ID_NOT_FOUND = 105
# the messages of errors beyond 2.6's table (kactor/cli/java_errors.py), as Kafka 3.6's Errors has them
_MESSAGES_AFTER_2_6 = {TRANSACTIONAL_ID_NOT_FOUND: "The transactionalId could not be found."}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "transactions",
        description="This tool is used to analyze the transactional state of producers in the cluster. It can be "
                    "used to detect and recover from hanging transactions.")
    add_client_config_arg(p, "--command-config", "property file containing configs to be passed to admin client")
    add_bootstrap_args(p)
    commands = p.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    commands.required = True
    commands.add_parser("list", help="list transactions")
    d = commands.add_parser("describe", help="describe the state of an active transactional-id",
                            description="Describe the state of an active transactional-id.")
    d.add_argument("--transactional-id", required=True, help="transactional id")
    dp = commands.add_parser("describe-producers", help="describe the states of active producers for a topic "
                                                        "partition")
    dp.add_argument("--broker-id", type=int, help="optional broker id to describe the producer state on a specific "
                                                  "replica")
    dp.add_argument("--topic", required=True, help="topic name")
    dp.add_argument("--partition", type=int, required=True, help="partition number")
    a = commands.add_parser("abort", help="abort a hanging transaction (requires administrative privileges)")
    a.add_argument("--topic", required=True, help="topic name")
    a.add_argument("--partition", type=int, required=True, help="partition number")
    new = a.add_argument_group("Brokers on versions 3.0 and above",
                               "For newer brokers, only the start offset of the transaction to be aborted is "
                               "required")
    new.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    old = a.add_argument_group("Brokers on versions older than 3.0",
                               "For older brokers, you must provide all of these arguments")
    old.add_argument("--producer-id", type=int, help="producer id")
    old.add_argument("--producer-epoch", type=int, help="producer epoch")
    old.add_argument("--coordinator-epoch", type=int, help="coordinator epoch")
    f = commands.add_parser("find-hanging", help="find hanging transactions")
    f.add_argument("--broker-id", type=int, help="broker id to search for hanging transactions")
    f.add_argument("--max-transaction-timeout", type=int, default=15,
                   help="maximum transaction timeout in minutes to limit the scope of the search (15 minutes by "
                        "default)")
    f.add_argument("--topic", help="topic name to limit search to (required if --partition is specified)")
    f.add_argument("--partition", type=int, help="partition number")
    p.set_defaults(func=run, _parser=p)


# ------------------------------------------------------------------------------------------------------- values


@attrs.frozen(slots=True)
class ProducerState:
    """Admin's ProducerState (a DescribeProducers entry)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int  # -1: none
    current_transaction_start_offset: int  # -1: none


@attrs.frozen(slots=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@attrs.frozen(slots=True)
class TransactionDescription:
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_start_time_ms: int  # -1: none
    topic_partitions: tuple[tuple[str, int], ...]


@attrs.frozen(slots=True)
class AbortTransactionSpec:
    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __str__(self) -> str:
        return (f"AbortTransactionSpec(topicPartition={self.topic}-{self.partition}, producerId={self.producer_id}, "
                f"producerEpoch={self.producer_epoch}, coordinatorEpoch={self.coordinator_epoch})")


class AdminError(Exception):
    """A failed admin call: its Java exception's message (``Throwable.getMessage``)."""


def error_message(code: int, message: str | None = None) -> str:
    """The message of the exception Kafka's client makes of an error code."""
    from kactor.cli.java_errors import JAVA_ERRORS

    if message:
        return message
    if code in _MESSAGES_AFTER_2_6:
        return _MESSAGES_AFTER_2_6[code]
    return JAVA_ERRORS.get(code, ("", f"Unknown error code {code}"))[1] or ""


# ------------------------------------------------------------------------------------------------------- output


def pretty_print_table(headers: Sequence[str], rows: Sequence[Sequence[str]], out: Callable[[str], None]) -> None:
    """ToolsUtils.prettyPrintTable: every cell padded to its column's widest, each followed by a tab."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i in range(len(headers)):
            widths[i] = max(widths[i], len(row[i]))
    for row in (headers, *rows):
        out("".join(cell.ljust(widths[i]) + "\t" for i, cell in enumerate(row)))


LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                    "TopicPartitions")
PRODUCERS_HEADERS = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                     "CurrentTransactionStartOffset")
HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)")


def list_rows(by_broker: dict[int, list[TransactionListing]]) -> list[list[str]]:
    """ListTransactionsCommand.execute's rows: per broker, its listings."""
    return [[t.transactional_id, str(broker), str(t.producer_id), t.state]
            for broker, listings in by_broker.items() for t in listings]


def describe_row(transactional_id: str, d: TransactionDescription, now_ms: int) -> list[str]:
    """DescribeTransactionsCommand.execute's row (the duration from the tool's clock)."""
    start = d.transaction_start_time_ms
    return [str(d.coordinator_id), transactional_id, str(d.producer_id), str(d.producer_epoch), d.state,
            str(d.transaction_timeout_ms), "None" if start < 0 else str(start),
            "None" if start < 0 else str(now_ms - start),
            ",".join(f"{t}-{p}" for t, p in d.topic_partitions)]


def producer_rows(producers: Iterable[ProducerState]) -> list[list[str]]:
    return [[str(p.producer_id), str(p.producer_epoch), str(p.coordinator_epoch), str(p.last_sequence),
             str(p.last_timestamp),
             "None" if p.current_transaction_start_offset < 0 else str(p.current_transaction_start_offset)]
            for p in producers]


def hanging_rows(hanging: Iterable[tuple[tuple[str, int], ProducerState]], now_ms: int) -> list[list[str]]:
    """FindHangingTransactionsCommand.printHangingTransactions' rows (the duration in whole minutes)."""
    return [[t, str(p), str(s.producer_id), str(s.producer_epoch), str(s.coordinator_epoch),
             str(s.current_transaction_start_offset), str(s.last_timestamp),
             str((now_ms - s.last_timestamp) // 60000)] for (t, p), s in hanging]


# -------------------------------------------------------------------------------------------------- decisions


def candidate_open_transactions(by_partition: dict[tuple[str, int], list[ProducerState]], now_ms: int,
                                max_transaction_timeout_ms: int) -> list[tuple[tuple[str, int], ProducerState]]:
    """collectCandidateOpenTransactions: producers with a transaction open on a partition for longer than the
    largest transaction timeout the search allows (since their last append)."""
    return [(tp, s) for tp, states in by_partition.items() for s in states
            if s.current_transaction_start_offset >= 0 and now_ms - s.last_timestamp > max_transaction_timeout_ms]


def filter_hanging(candidates: list[tuple[tuple[str, int], ProducerState]], transactional_ids: dict[int, str],
                   descriptions: dict[str, TransactionDescription | None]
                   ) -> list[tuple[tuple[str, int], ProducerState]]:
    """filterHangingTransactions: an open transaction is hanging when no transactional id has its producer id, the
    id's coordinator does not know the id, or the coordinator's transaction does not hold that partition (it will
    never write that partition a marker)."""
    hanging = []
    for tp, state in candidates:
        txn_id = transactional_ids.get(state.producer_id)
        description = descriptions.get(txn_id) if txn_id is not None else None
        if description is None or tp not in description.topic_partitions:
            hanging.append((tp, state))
    return hanging


def abort_spec_for_start_offset(topic: str, partition: int, start_offset: int,
                                producers: Iterable[ProducerState]) -> AbortTransactionSpec:
    """AbortTransactionCommand.buildAbortSpec: the producer whose open transaction starts at ``start_offset``; a
    coordinator epoch it has none of is 0."""
    for s in producers:
        if s.current_transaction_start_offset >= 0 and s.current_transaction_start_offset == start_offset:
            return AbortTransactionSpec(topic, partition, s.producer_id, s.producer_epoch,
                                        max(s.coordinator_epoch, 0))
    raise CliError(f"Could not find any open transactions starting at offset {start_offset} on partition "
                   f"{topic}-{partition}")


# ------------------------------------------------------------------------------------------------------- client


class TransactionsAdmin:
    """The AdminClient calls kafka-transactions.sh makes, over kactor/cli/kafka_wire.py (one request per fresh
    connection, to the node the AdminClient would choose)."""

    def __init__(self, target: Any, timeout_s: float = TIMEOUT_S) -> None:
        from kactor.cli import kafka_wire

        self.wire = kafka_wire
        self.servers = kafka_wire.servers_of(target)
        self.timeout_s = timeout_s

    def _exchange(self, node: tuple[str, int], api: tuple[int, int], body: dict[str, Any]) -> dict[str, Any]:
        return self.wire.exchange(node, *api, body, self.timeout_s, self.servers.props)

    def _metadata(self, topics: list[str] | None) -> dict[str, Any]:
        """A Metadata answer for ``topics`` (None: every topic; []: the brokers only)."""
        meta = self.wire.metadata(self.servers, self.timeout_s)
        if not meta["brokers"]:
            raise AdminError("no broker in the cluster's metadata")
        if topics == []:
            return meta
        body = {"topics": None if topics is None else [{"name": t} for t in topics],
                "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
                "include_topic_authorized_operations": False}
        return self._exchange((meta["brokers"][0]["host"], meta["brokers"][0]["port"]), METADATA, body)

    @staticmethod
    def _node(meta: dict[str, Any], node_id: int) -> tuple[str, int]:
        for b in meta["brokers"]:
            if b["node_id"] == node_id:
                return b["host"], b["port"]
        raise AdminError(f"broker {node_id} is not in the cluster's metadata")

    def list_transactions(self, producer_ids: Iterable[int] = ()) -> dict[int, list[TransactionListing]]:
        """Admin.listTransactions(...).allByBrokerId(): ListTransactions to every broker."""
        meta = self._metadata([])
        out: dict[int, list[TransactionListing]] = {}
        deadline = time.monotonic() + self.timeout_s
        for b in sorted(meta["brokers"], key=lambda b: b["node_id"]):
            while True:
                answer = self._exchange((b["host"], b["port"]), LIST_TRANSACTIONS,
                                        {"state_filters": [], "producer_id_filters": list(producer_ids)})
                if answer["error_code"] in RETRIABLE and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                break
            if answer["error_code"] != 0:
                raise AdminError(error_message(answer["error_code"]))
            out[b["node_id"]] = [TransactionListing(t["transactional_id"], t["producer_id"], t["transaction_state"])
                                 for t in answer["transaction_states"]]
        return out

    def describe_transaction(self, transactional_id: str) -> TransactionDescription:
        """Admin.describeTransactions: FindCoordinator(TRANSACTION), then DescribeTransactions there; retried while
        the coordinator loads or moves."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            meta = self._metadata([])
            found = self._exchange(self._node(meta, meta["brokers"][0]["node_id"]), FIND_COORDINATOR,
                                   {"key": transactional_id, "key_type": COORDINATOR_TYPE_TRANSACTION})
            code, message = found["error_code"], found.get("error_message")
            if code == 0:
                answer = self._exchange((found["host"], found["port"]), DESCRIBE_TRANSACTIONS,
                                        {"transactional_ids": [transactional_id]})
                state = answer["transaction_states"][0]
                code, message = state["error_code"], None
                if code == 0:
                    return TransactionDescription(
                        found["node_id"], state["transaction_state"], state["producer_id"], state["producer_epoch"],
                        state["transaction_timeout_ms"], state["transaction_start_time_ms"],
                        tuple((t["topic"], p) for t in state["topics"] for p in t["partitions"]))
            if code not in RETRIABLE or time.monotonic() > deadline:
                raise AdminError(error_message(code, message), code)
            time.sleep(0.2)

    def partitions(self, topics: list[str] | None, broker_id: int | None) -> list[tuple[str, int]]:
        """describeTopics' partitions (those with a replica on ``broker_id`` if given): every topic when None."""
        meta = self._metadata(topics)
        out = []
        for t in meta["topics"]:
            if t["error_code"] != 0:
                raise AdminError(error_message(t["error_code"]))
            for p in sorted(t["partitions"], key=lambda p: p["partition_index"]):
                if broker_id is None or broker_id in p["replica_nodes"]:
                    out.append((t["name"], p["partition_index"]))
        return out

    def describe_producers(self, tps: Sequence[tuple[str, int]], broker_id: int | None = None
                           ) -> dict[tuple[str, int], list[ProducerState]]:
        """Admin.describeProducers: DescribeProducers to each partition's leader, or to ``broker_id``."""
        meta = self._metadata(sorted({t for t, _ in tps}))
        leaders = {(t["name"], p["partition_index"]): p["leader_id"] for t in meta["topics"] for p in t["partitions"]}
        by_node: dict[int, list[tuple[str, int]]] = {}
        for tp in tps:
            node = broker_id if broker_id is not None else leaders.get(tp, -1)
            if node is None or node < 0:
                raise AdminError(error_message(5 if tp in leaders else 3))  # LEADER_NOT_AVAILABLE / UNKNOWN_TOPIC
            by_node.setdefault(node, []).append(tp)
        out: dict[tuple[str, int], list[ProducerState]] = {}
        for node, parts in by_node.items():
            topics: dict[str, list[int]] = {}
            for t, p in parts:
                topics.setdefault(t, []).append(p)
            answer = self._exchange(self._node(meta, node), DESCRIBE_PRODUCERS, {
                "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]})
            for t in answer["topics"]:
                for p in t["partitions"]:
                    if p["error_code"] != 0:
                        raise AdminError(error_message(p["error_code"], p.get("error_message")))
                    out[(t["name"], p["partition_index"])] = [
                        ProducerState(s["producer_id"], s["producer_epoch"], s["last_sequence"], s["last_timestamp"],
                                      s["coordinator_epoch"], s["current_txn_start_offset"])
                        for s in p["active_producers"]]
        return {tp: out.get(tp, []) for tp in tps}

    def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """Admin.abortTransaction: a WriteTxnMarkers ABORT of the one partition to its leader."""
        meta = self._metadata([spec.topic])
        leader = next((p["leader_id"] for t in meta["topics"] if t["name"] == spec.topic for p in t["partitions"]
                       if p["partition_index"] == spec.partition), -1)
        if leader < 0:
            raise AdminError(error_message(5))
        answer = self._exchange(self._node(meta, leader), WRITE_TXN_MARKERS, {"markers": [{
            "producer_id": spec.producer_id, "producer_epoch": spec.producer_epoch, "transaction_result": False,
            "topics": [{"name": spec.topic, "partition_indexes": [spec.partition]}],
            "coordinator_epoch": spec.coordinator_epoch}]})
        for m in answer["markers"]:
            for t in m["topics"]:
                for p in t["partitions"]:
                    if p["error_code"] != 0:
                        raise AdminError(error_message(p["error_code"]))


# ------------------------------------------------------------------------------------------------------ commands


def _fail(message: str, e: AdminError | None = None) -> CliError:
    """TransactionsCommand.printErrorAndExit."""
    if e is None:
        return CliError(message)
    return CliError(f"{message}: {e.args[0]}. Enable debug logging for additional detail.")


def run_list(admin: Any, args: argparse.Namespace, out: Callable[[str], None], now_ms: int) -> None:
    try:
        listings = admin.list_transactions()
    except AdminError as e:
        raise _fail("Failed to list transactions", e) from None
    pretty_print_table(LIST_HEADERS, list_rows(listings), out)


def run_describe(admin: Any, args: argparse.Namespace, out: Callable[[str], None], now_ms: int) -> None:
    txn_id = args.transactional_id
    try:
        description = admin.describe_transaction(txn_id)
    except AdminError as e:
        raise _fail(f"Failed to describe transaction state of transactional-id `{txn_id}`", e) from None
    pretty_print_table(DESCRIBE_HEADERS, [describe_row(txn_id, description, now_ms)], out)


def run_describe_producers(admin: Any, args: argparse.Namespace, out: Callable[[str], None], now_ms: int) -> None:
    tp = (args.topic, args.partition)
    try:
        producers = admin.describe_producers([tp], args.broker_id)[tp]
    except AdminError as e:
        where = "leader" if args.broker_id is None else f"broker {args.broker_id}"
        raise _fail(f"Failed to describe producers for partition {tp[0]}-{tp[1]} on {where}", e) from None
    pretty_print_table(PRODUCERS_HEADERS, producer_rows(producers), out)


def run_abort(admin: Any, args: argparse.Namespace, out: Callable[[str], None], now_ms: int) -> None:
    topic, partition = args.topic, args.partition
    if args.start_offset is None and args.producer_id is None:
        raise _fail("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or "
                    "above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
    if args.start_offset is None:
        if args.producer_epoch is None:
            raise _fail("Missing required argument --producer-epoch")
        if args.coordinator_epoch is None:
            raise _fail("Missing required argument --coordinator-epoch")
        # a transaction that hung before its producer id's first marker has coordinator epoch -1: 0 is at or below
        # any leader epoch
        spec = AbortTransactionSpec(topic, partition, args.producer_id, args.producer_epoch,
                                    max(args.coordinator_epoch, 0))
    else:
        try:
            producers = admin.describe_producers([(topic, partition)])[(topic, partition)]
        except AdminError as e:
            raise _fail(f"Failed to validate producer state for partition {topic}-{partition}", e) from None
        spec = abort_spec_for_start_offset(topic, partition, args.start_offset, producers)
    try:
        admin.abort_transaction(spec)
    except AdminError as e:
        raise _fail(f"Failed to abort transaction {spec}", e) from None


def run_find_hanging(admin: Any, args: argparse.Namespace, out: Callable[[str], None], now_ms: int) -> None:
    if args.topic is None and args.broker_id is None:
        raise _fail("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the "
                    "search")
    if args.partition is not None and args.topic is None:
        raise _fail("The --partition argument requires --topic to be provided")
    max_timeout_ms = args.max_transaction_timeout * 60000
    if args.topic is not None and args.partition is not None:
        tps = [(args.topic, args.partition)]
    else:
        try:
            tps = admin.partitions(None if args.topic is None else [args.topic], args.broker_id)
        except AdminError as e:
            raise _fail("Failed to describe topics", e) from None
    candidates: list[tuple[tuple[str, int], ProducerState]] = []
    for i in range(0, len(tps), MAX_BATCH_SIZE):
        batch = tps[i:i + MAX_BATCH_SIZE]
        try:
            states = admin.describe_producers(batch, args.broker_id)
        except AdminError as e:
            raise _fail(f"Failed to describe producers for {len(batch)} partitions on broker "
                        f"{'Optional.empty' if args.broker_id is None else f'Optional[{args.broker_id}]'}",
                        e) from None
        candidates += candidate_open_transactions(states, now_ms, max_timeout_ms)
    hanging: list[tuple[tuple[str, int], ProducerState]] = []
    if candidates:
        pids = {s.producer_id for _, s in candidates}
        try:
            listings = admin.list_transactions(sorted(pids))
        except AdminError as e:
            raise _fail(f"Failed to list transactions for {len(pids)} producers", e) from None
        txn_ids = {t.producer_id: t.transactional_id for ls in listings.values() for t in ls if t.producer_id in pids}
        descriptions: dict[str, TransactionDescription | None] = {}
        for txn_id in dict.fromkeys(txn_ids.values()):
            try:
                descriptions[txn_id] = admin.describe_transaction(txn_id)
            except AdminError as e:
                if len(e.args) > 1 and e.args[1] == TRANSACTIONAL_ID_NOT_FOUND:
                    descriptions[txn_id] = None
                else:
                    raise _fail(f"Failed to describe {len(txn_ids)} transactions", e) from None
        hanging = filter_hanging(candidates, txn_ids, descriptions)
    pretty_print_table(HANGING_HEADERS, hanging_rows(hanging, now_ms), out)


COMMANDS = {"list": run_list, "describe": run_describe, "describe-producers": run_describe_producers,
            "abort": run_abort, "find-hanging": run_find_hanging}


def run(args: argparse.Namespace) -> int:
    target = servers(args)
    with kafka_errors():
        COMMANDS[args.command](TransactionsAdmin(target), args, lambda line: print(line, flush=True),
                               int(time.time() * 1000))
    sys.stdout.flush()
    return 0
