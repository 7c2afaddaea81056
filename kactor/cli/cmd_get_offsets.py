"""``kactor get-offsets``: Kafka 2.6.3's GetOffsetShell (``kafka-run-class.sh kafka.tools.GetOffsetShell``).

``--broker-list HOST:PORT,... --topic T [--partitions 0,1] [--time -1|-2|MS]`` prints ``T:P:OFFSET`` per partition,
in partition order: the log end (-1, the high watermark: Kafka's consumer.endOffsets), the log start (-2,
beginningOffsets) or the first offset whose timestamp is at least MS (offsetsForTimes; empty when there is none).
``--offsets`` and ``--max-wait-ms`` are taken and ignored, as 2.6.3's "DEPRECATED AND IGNORED" options.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from kactor.cli import CliError
from kactor.cli.kafka_support import kafka_errors
from kactor.cli.support import usage_error
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, client_config, cluster_metadata, parse_bootstrap, watermark_offsets

LATEST_TIMESTAMP = -1  # ListOffsetRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2  # ListOffsetRequest.EARLIEST_TIMESTAMP
CLIENT_ID = "GetOffsetShell"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "get-offsets",
        description="An interactive shell for getting topic offsets.")
    p.add_argument("--broker-list", required=True, metavar="hostname:port,...,hostname:port",
                   help="REQUIRED: The list of hostname and port of the server to connect to.")
    p.add_argument("--topic", required=True, metavar="topic", help="REQUIRED: The topic to get offset from.")
    p.add_argument("--partitions", default="", metavar="partition ids",
                   help="comma separated list of partition ids. If not specified, it will find offsets for all "
                        "partitions")
    p.add_argument("--time", type=int, default=LATEST_TIMESTAMP, metavar="timestamp/-1(latest)/-2(earliest)",
                   help="timestamp of the offsets before that. [Note: No offset is returned, if the timestamp "
                        "greater than recently commited record timestamp is given.]")
    p.add_argument("--offsets", type=int, default=1, metavar="count",
                   help="DEPRECATED AND IGNORED: number of offsets returned")
    p.add_argument("--max-wait-ms", type=int, default=1000, metavar="ms",
                   help="DEPRECATED AND IGNORED: The max amount of time each fetch request waits.")
    p.set_defaults(func=run, _parser=p)


def requested_partitions(text: str) -> set[int]:
    """--partitions as GetOffsetShell reads it (an empty set: every partition); CliError on a non-number."""
    if not text:
        return set()
    try:
        return {int(p) for p in text.split(",")}
    except ValueError:
        raise CliError(f"--partitions expects a comma separated list of numeric partition ids, but received: "
                       f"{text}") from None


def get_offsets(consumer: Any, bootstrap: str, topic: str, wanted: set[int], timestamp: int,
                err: Callable[[str], None], timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """GetOffsetShell.main after the options: the ``topic:partition:offset`` lines; CliError where it exits 1."""
    from confluent_kafka import TopicPartition

    metadata = cluster_metadata(consumer, bootstrap, timeout_s)
    info = metadata.topics.get(topic)
    if info is None or (info.error is not None and info.error.name() == "UNKNOWN_TOPIC_OR_PART"):
        raise CliError(f"Topic {topic} does not exist")
    partitions = [p for p in info.partitions.values() if not wanted or p.id in wanted]
    if not partitions:
        if not wanted:
            raise CliError(f"Topic {topic} has 0 partitions")
        raise CliError(f"Topic {topic} does not have any of the requested partitions "
                       f"{','.join(str(p) for p in sorted(wanted))}")
    for missing in sorted(wanted - {p.id for p in partitions}):
        err(f"Error: partition {missing} does not exist")
    tps = []
    for p in sorted(partitions, key=lambda p: p.id):
        if p.leader < 0:
            err(f"Error: partition {p.id} does not have a leader. Skip getting offsets")
        else:
            tps.append(TopicPartition(topic, p.id))
    offsets: dict[int, int | None] = {}
    if timestamp in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP):
        deadline = time.monotonic() + timeout_s
        for tp in tps:
            low, high = watermark_offsets(consumer, tp, deadline)
            offsets[tp.partition] = high if timestamp == LATEST_TIMESTAMP else low
    elif tps:
        for tp in consumer.offsets_for_times([TopicPartition(topic, tp.partition, timestamp) for tp in tps],
                                             timeout=timeout_s):
            offsets[tp.partition] = tp.offset if tp.offset >= 0 else None  # offsetsForTimes' null
    return [f"{topic}:{p}:{'' if offsets[p] is None else offsets[p]}" for p in sorted(offsets)]


def run(args: argparse.Namespace) -> int:
    try:
        bootstrap = parse_bootstrap(args.broker_list)
    except ValueError as e:
        usage_error(args, f"--broker-list: {e}")
    wanted = requested_partitions(args.partitions)
    from confluent_kafka import Consumer

    with kafka_errors():
        consumer = Consumer(client_config(bootstrap, CLIENT_ID, {"group.id": CLIENT_ID, "enable.auto.commit": False}))
        try:
            lines = get_offsets(consumer, bootstrap, args.topic, wanted, args.time,
                                lambda line: print(line, file=sys.stderr, flush=True))
        finally:
            consumer.close()
    for line in lines:
        print(line)
    return 0
