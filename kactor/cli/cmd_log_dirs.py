"""``kactor log-dirs --describe``: kafka-log-dirs.sh (Kafka 2.6's LogDirsCommand) through Kafka's protocol.

Asks each broker of ``--broker-list`` (every broker of the cluster by default) for its log dirs (DescribeLogDirs, all
partitions) and prints what LogDirsCommand prints: two lines, then one JSON document —
``{"version":1,"brokers":[{"broker":B,"logDirs":[{"logDir":D,"error":null|exception class,"partitions":[{"partition":
"topic-P","size":S,"offsetLag":L,"isFuture":F}]}]}]}`` — keeping only the topics of ``--topic-list`` when it is given.
The requests go through kactor.cli.kafka_wire, connected as ``--command-config`` says.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from kactor.cli import CliError, kafka_wire
from kactor.cli.client_properties import Servers
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, servers
from kactor.cli.support import usage_error
from kactor.kafka_clients import KafkaClientError
from protocol.api_versions import API_KEYS

DESCRIBE_LOG_DIRS = API_KEYS["DescribeLogDirs"]
DESCRIBE_LOG_DIRS_VERSION = 1  # what Kafka 2.6's admin client sends a 2.6 broker (v2 is the flexible v1)
# LogDirInfo.error as LogDirsCommand prints it: the exception's class (Errors.exception of the dir's error code)
_EXCEPTIONS = {56: "org.apache.kafka.common.errors.KafkaStorageException",
               57: "org.apache.kafka.common.errors.LogDirNotFoundException"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "log-dirs",
        description="Queries the brokers for their log directories and, in each, the size, offset lag and "
                    "future flag of every partition's log, and prints them as Kafka's kafka-log-dirs.sh does (JSON).")
    add_bootstrap_args(p)
    add_client_config_arg(p)
    p.add_argument("--describe", action="store_true", help="describe the specified log directories on the brokers")
    p.add_argument("--broker-list", metavar="B1,B2",
                   help="the brokers to query, comma-separated (default: every broker of the cluster)")
    p.add_argument("--topic-list", default="", metavar="T1,T2",
                   help="only these topics, comma-separated (default: every topic)")
    p.add_argument("--timeout", type=int, default=10000, metavar="MS",
                   help="milliseconds to wait for each answer (default 10000)")
    p.set_defaults(func=run, _parser=p)


def run(args: argparse.Namespace) -> int:
    if not args.describe:
        usage_error(args, "Command must include exactly one action: --describe")
    target = servers(args)
    timeout_s = args.timeout / 1000.0
    wanted: list[int] | None = None
    if args.broker_list is not None:
        try:
            wanted = [int(b) for b in args.broker_list.split(",") if b.strip()]
        except ValueError:
            usage_error(args, f"--broker-list: expected broker ids separated by commas, got {args.broker_list!r}")
    topics = {t for t in args.topic_list.split(",") if t}
    brokers = _alive_brokers(target, timeout_s)
    broker_ids = sorted(brokers) if wanted is None else wanted
    print("Querying brokers for log directories information")
    described = {}
    for broker_id in broker_ids:
        if broker_id not in brokers:
            raise CliError(f"broker {broker_id} is not alive (alive: {','.join(map(str, sorted(brokers)))})")
        described[broker_id] = _describe(target, brokers[broker_id], timeout_s)
    print(f"Received log directory information from brokers {','.join(map(str, broker_ids))}")
    print(format_as_json(described, topics))
    return 0


def format_as_json(by_broker: dict[int, list[dict[str, Any]]], topics: set[str]) -> str:
    """LogDirsCommand.formatAsJson: each broker's dirs, each dir's error (null when none) and partitions."""
    return json.dumps({"version": 1, "brokers": [
        {"broker": broker, "logDirs": [
            {"logDir": d["log_dir"], "error": _error(d["error_code"]), "partitions": [
                {"partition": f"{t['name']}-{p['partition_index']}", "size": p["partition_size"],
                 "offsetLag": p["offset_lag"], "isFuture": p["is_future_key"]}
                for t in d["topics"] if not topics or t["name"] in topics for p in t["partitions"]]}
            for d in dirs]}
        for broker, dirs in by_broker.items()]}, separators=(",", ":"))


def _error(code: int) -> str | None:
    if code == 0:
        return None
    return _EXCEPTIONS.get(code, f"error code {code}")


def _alive_brokers(target: Servers, timeout_s: float) -> dict[int, tuple[str, int]]:
    """Broker id -> (host, port) from the first bootstrap server that answers a Metadata request."""
    try:
        meta = kafka_wire.metadata(target, timeout_s)
    except KafkaClientError as e:
        raise CliError(str(e)) from None
    return {b["node_id"]: (b["host"], b["port"]) for b in meta["brokers"]}


def _describe(target: Servers, address: tuple[str, int], timeout_s: float) -> list[dict[str, Any]]:
    try:
        body = kafka_wire.exchange(address, DESCRIBE_LOG_DIRS, DESCRIBE_LOG_DIRS_VERSION, {"topics": None},
                                   timeout_s, target.props)
    except KafkaClientError as e:
        raise CliError(f"cannot describe the log dirs of {address[0]}:{address[1]}: {e}") from None
    return list(body["results"])
