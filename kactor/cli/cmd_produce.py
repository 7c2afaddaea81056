"""``kactor produce``: append N records to a topic's partition leaders (kafka-console-producer /
kafka-producer-perf-test reduced to what replication needs).

The leader of each partition is read from its state znode (``/brokers/topics/<t>/partitions/<p>/state``) and its
endpoint from ``/brokers/ids/<leader>`` — what a Kafka client learns from a Metadata response — then a
`ProduceRequest` per partition (one record batch of at most MAX_RECORDS_PER_REQUEST records) goes to the leader's
``replica-manager`` actor over the broker transport. Without
``--partition`` the records are spread round-robin over the topic's partitions (the default partitioner without
keys). A leader that moved between the read and the request (NOT_LEADER_OR_FOLLOWER, ...) is looked up again, as
Kafka's producer refreshes its metadata and retries.
"""

from __future__ import annotations

import argparse
import time

from kactor.cli import CliError, kafka_options, produce_kafka
from kactor.cli.kafka_support import check_client_config
from kactor.cli.support import add_zookeeper_args, admin_client, usage_error
from messages.common import NO_LEADER, Errors, TopicPartition
from zk_bridge.admin.admin_zk import AdminZkClient

ZK_RETRIES = 5  # the --zookeeper form's retries when --retries is not given
MAX_RECORDS_PER_REQUEST = 1000  # keeps one frame small; Kafka's batch.size plays this role
# Errors after which a producer refreshes metadata and retries (Kafka's RetriableException subclasses).
RETRIABLE = ("NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", "KAFKA_STORAGE_ERROR", "NOT_ENOUGH_REPLICAS",
             "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "REQUEST_TIMED_OUT", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "produce",
        description="Appends records to a topic and prints what was acknowledged. With --bootstrap-server as "
                    "kafka-console-producer through Kafka's protocol (records from --count or stdin); with "
                    "--zookeeper each partition's leader is read from ZooKeeper and --count records are appended "
                    "to it over the broker transport.")
    add_zookeeper_args(p, required=False)
    p.add_argument("--topic", required=True, help="the topic to write to")
    p.add_argument("--partition", type=int, default=None, metavar="P",
                   help="only this partition (default: round-robin over all partitions)")
    p.add_argument("--count", type=int, default=None, metavar="N",
                   help="number of records (required with --zookeeper; with --bootstrap-server, stdin otherwise)")
    p.add_argument("--acks", choices=("0", "1", "-1", "all"), default="1",
                   help="1: the leader appended; -1/all: every ISR member has them (default 1)")
    p.add_argument("--value-prefix", default="record-", metavar="TEXT",
                   help="record values are TEXT<i> (default 'record-')")
    p.add_argument("--request-timeout", type=float, default=30.0, metavar="S",
                   help="seconds to wait for each answer (default 30)")
    p.add_argument("--retries", type=int, default=None,
                   help="retries after a retriable error (default: with --zookeeper 5; with --bootstrap-server "
                        "librdkafka's, as kcat: until the delivery timeout, 120 s)")
    produce_kafka.add_args(p)
    kafka_options.add_refusals(p, "produce")
    p.set_defaults(func=run, _parser=p)


def kafka_names(args: argparse.Namespace) -> None:
    """ConsoleProducer's names of kactor's options: --broker-list (deprecated, ignored beside --bootstrap-server),
    --request-required-acks (--acks), --request-timeout-ms (--request-timeout, in seconds),
    --message-send-max-retries (--retries); given, Kafka's wins."""
    if args.bootstrap_server is None and args.broker_list is not None:
        args.bootstrap_server = args.broker_list
    if args.request_required_acks is not None:
        args.acks = args.request_required_acks
    if args.request_timeout_ms is not None:
        if args.request_timeout_ms <= 0:
            usage_error(args, "--request-timeout-ms must be non-negative and non-zero")
        args.request_timeout = args.request_timeout_ms / 1000
    if args.message_send_max_retries is not None:
        args.retries = args.message_send_max_retries


def run(args: argparse.Namespace) -> int:
    kafka_names(args)
    check_client_config(args)
    if args.bootstrap_server is not None:  # Kafka's protocol: kactor/cli/produce_kafka.py
        if args.zookeeper is not None:
            usage_error(args, "--zookeeper and --bootstrap-server can't be used together")
        return produce_kafka.run(args)
    if args.zookeeper is None:
        usage_error(args, "one of --bootstrap-server or --zookeeper is required")
    if args.count is None:
        usage_error(args, "--count is required with --zookeeper")
    if args.acks == "0":
        usage_error(args, "--acks 0 needs --bootstrap-server")
    if args.count < 1:
        usage_error(args, "--count must be at least 1")
    if args.retries is None:
        args.retries = ZK_RETRIES
    if args.partition is not None and args.partition < 0:
        usage_error(args, "--partition must not be negative")
    if args.request_timeout <= 0:
        usage_error(args, "--request-timeout must be positive")
    acks = -1 if args.acks in ("-1", "all") else 1
    with admin_client(args) as admin:
        assignment = admin.get_full_replica_assignment(args.topic)
        if not assignment:
            raise CliError(f"Topic {args.topic} does not exist")
        if args.partition is not None:
            if args.partition not in assignment:
                raise CliError(f"Partition {args.partition} of topic {args.topic} does not exist "
                               f"(partitions 0..{max(assignment)})")
            partitions = [args.partition]
        else:
            partitions = sorted(assignment)
        values: dict[int, list[str]] = {p: [] for p in partitions}
        for i in range(args.count):  # round-robin, as the default partitioner does for records without keys
            values[partitions[i % len(partitions)]].append(f"{args.value_prefix}{i}")
        failed = 0
        for p in partitions:
            if not values[p]:
                continue
            tp = TopicPartition(args.topic, p)
            try:
                base, leader = _produce_partition(admin, tp, values[p], acks, args)
            except CliError as e:
                if len(partitions) == 1:
                    raise
                print(f"kactor produce: {e}", flush=True)
                failed += 1
                continue
            print(f"{tp.topic}-{tp.partition}: {len(values[p])} records at base offset {base} (leader {leader})",
                  flush=True)
    if failed:
        raise CliError(f"{failed} of {len(partitions)} partitions failed")
    return 0


def _leader_endpoint(admin: AdminZkClient, tp: TopicPartition) -> tuple[int, str, int]:
    """(leader id, host, port) from the state znode and the leader's registration; CliError otherwise."""
    state = admin.get_topic_partition_state(tp)
    if state is None:
        raise CliError(f"{tp.topic}-{tp.partition} has no state yet (the controller has not elected a leader)")
    leader = state.leader_and_isr.leader
    if leader == NO_LEADER:
        raise CliError(f"{tp.topic}-{tp.partition} has no leader (leader -1, ISR {list(state.leader_and_isr.isr)})")
    brokers = {b.id: b for b in admin.get_all_brokers_in_cluster()}
    broker = brokers.get(leader)
    if broker is None:
        raise CliError(f"leader {leader} of {tp.topic}-{tp.partition} is not registered in /brokers/ids")
    ep = broker.endpoints[0]
    return leader, ep.host, ep.port


def _produce_partition(admin: AdminZkClient, tp: TopicPartition, values: list[str], acks: int,
                       args: argparse.Namespace) -> tuple[int, int]:
    """Send ``values`` to ``tp``'s leader in batches of at most MAX_RECORDS_PER_REQUEST records; (first base offset,
    leader)."""
    from edges.transport import TransportError, request
    from kactor.records import values_batch
    from messages.replication import ProducePartition, ProduceRequest, ProduceResponse

    first_base: int | None = None
    leader = -1
    for start in range(0, len(values), MAX_RECORDS_PER_REQUEST):
        batch = values_batch(values[start:start + MAX_RECORDS_PER_REQUEST], int(time.time() * 1000))
        attempt = 0
        while True:
            leader, host, port = _leader_endpoint(admin, tp)
            body = ProduceRequest(acks, int(args.request_timeout * 1000), (ProducePartition(tp, batch),))
            try:
                answer = request(host, port, body, timeout_s=args.request_timeout)
            except TransportError as e:
                error = f"cannot reach leader {leader} of {tp.topic}-{tp.partition} at {host}:{port}: {e}"
                retriable = True
            else:
                if not isinstance(answer, ProduceResponse) or len(answer.partitions) != 1:
                    raise CliError(f"broker {leader} answered {type(answer).__name__}, not a ProduceResponse for "
                                   f"{tp.topic}-{tp.partition}")
                result = answer.partitions[0]
                if result.error == Errors.NONE:
                    if first_base is None:
                        first_base = result.base_offset
                    break
                error = f"{tp.topic}-{tp.partition}: broker {leader} answered {result.error.name}"
                retriable = result.error.name in RETRIABLE
            attempt += 1
            if not retriable or attempt > args.retries:
                raise CliError(error)
            time.sleep(min(0.1 * 2 ** attempt, 2.0))  # retry.backoff.ms, growing
    assert first_base is not None
    return first_base, leader
