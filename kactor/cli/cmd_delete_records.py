"""``kactor delete-records``: kafka-delete-records.sh (Kafka 2.6's DeleteRecordsCommand) through Kafka's protocol.

Reads ``--offset-json-file`` — ``{"partitions":[{"topic":"t","partition":0,"offset":3}],"version":1}``, an offset of
-1 meaning each partition's high watermark — deletes the records before those offsets (AdminClient.deleteRecords:
a DeleteRecords request to each partition's leader) and prints what DeleteRecordsCommand prints:
``Executing records delete operation``, ``Records delete operation completed:``, then per partition
``partition: t-0\\tlow_watermark: 3`` or ``partition: t-0\\terror: <the Java exception>``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from kactor.cli import CliError
from kactor.cli.java_errors import java_exception_text
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, java_exception, kafka_errors, servers
from kactor.cli.support import read_text_file
from kactor.kafka_clients import admin_client
from messages.common import Errors

CLIENT_ID = "kactor-delete-records"
TIMEOUT_S = 60.0  # the admin client's default.api.timeout.ms: how long AdminClient.deleteRecords may take
OPERATION_TIMEOUT_S = 30.0  # the DeleteRecords request's timeout_ms: the admin client's request.timeout.ms


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "delete-records",
        description="This tool helps to delete records of the given partitions down to the specified offset.")
    add_bootstrap_args(p)
    add_client_config_arg(p, "--command-config", "A property file containing configs to be passed to Admin Client.")
    p.add_argument("--offset-json-file", required=True, metavar="FILE",
                   help='the JSON file with offset per partition: {"partitions":[{"topic":"foo", "partition":1, '
                        '"offset":1}], "version":1}')
    p.set_defaults(func=run, _parser=p)


def parse_offset_json(text: str) -> list[tuple[str, int, int]]:
    """DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup, then its duplicate check: (topic, partition, offset)
    in the file's order; a CliError (exit 1) with Kafka's message for what it refuses."""
    try:
        js = json.loads(text)
    except ValueError:
        raise CliError("The input string is not a valid JSON") from None
    if not isinstance(js, dict):
        raise CliError("The input string is not a valid JSON object")
    version = js.get("version", 1)  # EarliestVersion
    if version != 1:
        raise CliError(f"Not supported version field value {version}")
    partitions = js.get("partitions")
    if not isinstance(partitions, list):
        raise CliError("Missing partitions field")
    out = []
    for p in partitions:
        try:
            topic, partition, offset = p["topic"], p["partition"], p["offset"]
        except (KeyError, TypeError) as e:
            raise CliError(f"Missing field {e} in a partition of the offset JSON") from None
        if not isinstance(topic, str) or type(partition) is not int or type(offset) is not int:
            raise CliError(f"Invalid partition in the offset JSON: {json.dumps(p)}")
        out.append((topic, partition, offset))
    seen: set[tuple[str, int]] = set()
    duplicates = [f"{t}-{p}" for t, p, _ in out if (t, p) in seen or seen.add((t, p))]
    if duplicates:
        raise CliError("Offset json file contains duplicate topic partitions: "
                       + ",".join(dict.fromkeys(duplicates)))
    return out


def run(args: argparse.Namespace) -> int:
    target = servers(args)
    offsets = parse_offset_json(read_text_file(args.offset_json_file, "offset JSON file"))
    print("Executing records delete operation", flush=True)
    with kafka_errors():
        admin = admin_client(target.bootstrap, CLIENT_ID, target.librdkafka())
        results = delete_records(admin, offsets)
    print("Records delete operation completed:", flush=True)
    for (topic, partition), (low, error) in results.items():
        if error is None:
            print(f"partition: {topic}-{partition}\tlow_watermark: {low}", flush=True)
        else:
            print(f"partition: {topic}-{partition}\terror: {error}", flush=True)
    return 0  # as DeleteRecordsCommand: a partition's error is printed, not the exit status


# librdkafka's own errors for a partition it found no leader for in its metadata: _NOENT ("No leaders found", the
# whole request when none of its partitions has one), _UNKNOWN_TOPIC, _UNKNOWN_PARTITION
NO_LEADER_FOUND = (-156, -188, -190)


def delete_records(admin: Any, offsets: list[tuple[str, int, int]]) -> dict[tuple[str, int], tuple[int, str | None]]:
    """AdminClient.deleteRecords: each partition's (low watermark, None) or (-1, the Java exception text).

    A partition librdkafka finds no leader for gets the exception Kafka 2.6.3's KafkaAdminClient.deleteRecords makes
    from its metadata: the topic's error (UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist), else
    LEADER_NOT_AVAILABLE (``cluster.leaderFor`` is null: a partition the topic does not have, or no leader now)."""
    from confluent_kafka import KafkaException, TopicPartition

    if not offsets:
        return {}
    futures = admin.delete_records([TopicPartition(t, p, o) for t, p, o in offsets],
                                   request_timeout=TIMEOUT_S, operation_timeout=OPERATION_TIMEOUT_S)
    out: dict[tuple[str, int], tuple[int, str | None]] = {}
    leaderless: list[tuple[str, int]] = []
    for tp, future in futures.items():
        try:
            out[(tp.topic, tp.partition)] = (future.result(TIMEOUT_S + 5).low_watermark, None)
        except KafkaException as e:
            error = e.args[0]
            out[(tp.topic, tp.partition)] = (-1, java_exception(error))
            if error.code() in NO_LEADER_FOUND:
                leaderless.append((tp.topic, tp.partition))
    if leaderless:
        metadata = admin.list_topics(timeout=TIMEOUT_S)
        for t, p in leaderless:
            out[(t, p)] = (-1, _no_leader_exception(metadata, t, p))
    order = {(t, p): i for i, (t, p, _) in enumerate(offsets)}
    return dict(sorted(out.items(), key=lambda item: order.get(item[0], len(order))))


def _no_leader_exception(metadata: Any, topic: str, partition: int) -> str:
    """KafkaAdminClient.deleteRecords' failure of a partition without a leader in the metadata: the topic's error's
    exception, else LeaderNotAvailableException (Kafka's default messages: the metadata carries none)."""
    info = metadata.topics.get(topic)
    if info is None:
        return java_exception_text(int(Errors.UNKNOWN_TOPIC_OR_PARTITION))
    if info.error is not None and info.error.code() != 0:
        return java_exception_text(info.error.code())
    return java_exception_text(int(Errors.LEADER_NOT_AVAILABLE))
