"""Every option Kafka 2.6.3's tools accept, and what kactor does with it: the one home of that table.

Each row names a tool (Kafka's class, whose ``OptionParser.accepts(...)`` calls the rows were read from, and the kactor
command that is its twin), one option under Kafka's name, a value the option takes (None for a flag), and either
None — kactor takes the option under Kafka's name — or the one-line refusal kactor gives for it, naming the nearest
kactor option. ``add_refusals`` puts the refused options on the command's parser, so that such an option is a usage
error (exit 2) with that line rather than argparse's "unrecognized arguments"; tests/kactor/cli/test_kafka_options.py
runs every row through its command's parser, so an option of 2.6.3 that kactor neither takes nor refuses fails a test.

``help`` and ``version`` (CommandDefaultOptions) are on every parser (argparse's ``--help``, kactor.cli._Parser's
``--version``) and are not repeated per tool.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import attrs


@attrs.frozen(slots=True)
class KafkaOption:
    """One ``accepts(...)`` of a 2.6.3 tool: ``refusal`` None when kactor takes it under Kafka's name."""

    tool: str  # Kafka's class, e.g. kafka.admin.TopicCommand
    command: str  # kactor's command, e.g. topics
    name: str  # Kafka's option name without the dashes
    value: str | None  # a value the option takes (what the tests pass), None for a flag
    refusal: str | None = None


def _rows(tool: str, command: str, *rows: tuple[str, str | None] | tuple[str, str | None, str]) -> list[KafkaOption]:
    return [KafkaOption(tool, command, *row) for row in rows]  # type: ignore[arg-type]


ZK_TLS = ("--zk-tls-config-file is not taken (ZooKeeper is reached in plaintext, SASL logins through KAFKA_OPTS); "
          "use --zookeeper")

OPTIONS: tuple[KafkaOption, ...] = tuple([
    *_rows("kafka.admin.TopicCommand", "topics",
           ("bootstrap-server", "localhost:9092"), ("command-config", "client.properties"),
           ("zookeeper", "localhost:2181"), ("list", None), ("create", None), ("delete", None), ("alter", None),
           ("describe", None), ("topic", "t"), ("config", "retention.ms=1000"), ("delete-config", "retention.ms"),
           ("partitions", "1"), ("replication-factor", "1"), ("replica-assignment", "0:1"),
           ("under-replicated-partitions", None), ("unavailable-partitions", None),
           ("under-min-isr-partitions", None), ("at-min-isr-partitions", None),
           ("topics-with-overrides", None), ("if-exists", None), ("if-not-exists", None),
           ("disable-rack-aware", None),
           ("force", None),
           ("exclude-internal", None)),
    *_rows("kafka.admin.ConfigCommand", "configs",
           ("zookeeper", "localhost:2181"), ("bootstrap-server", "localhost:9092"),
           ("command-config", "client.properties"), ("alter", None), ("describe", None), ("all", None),
           ("entity-type", "topics"), ("entity-name", "t"), ("entity-default", None),
           ("add-config", "retention.ms=1000"),
           ("add-config-file", "configs.properties"),
           ("delete-config", "retention.ms"),
           ("force", None),
           ("topic", "t"), ("client", "c"), ("client-defaults", None), ("user", "u"), ("user-defaults", None),
           ("broker", "0"), ("broker-defaults", None),
           ("broker-logger", "0"),
           ("zk-tls-config-file", "zk-tls.properties", ZK_TLS)),
    *_rows("kafka.admin.AclCommand", "acls",
           ("bootstrap-server", "localhost:9092"), ("command-config", "client.properties"),
           ("authorizer", "kafka.security.authorizer.AclAuthorizer"),
           ("authorizer-properties", "zookeeper.connect=localhost:2181"), ("topic", "t"), ("cluster", None),
           ("group", "g"), ("transactional-id", "tx"), ("idempotent", None), ("delegation-token", "token"),
           ("resource-pattern-type", "LITERAL"), ("add", None), ("remove", None), ("list", None),
           ("operation", "Read"), ("allow-principal", "User:alice"), ("deny-principal", "User:bob"),
           ("principal", "User:alice"), ("allow-host", "*"), ("deny-host", "*"), ("producer", None),
           ("consumer", None), ("force", None), ("zk-tls-config-file", "zk-tls.properties", ZK_TLS)),
    *_rows("kafka.admin.ConsumerGroupCommand", "consumer-groups",
           ("bootstrap-server", "localhost:9092"), ("group", "g"), ("topic", "t"), ("all-topics", None),
           ("list", None), ("describe", None), ("all-groups", None), ("delete", None), ("timeout", "5000"),
           ("command-config", "client.properties"), ("reset-offsets", None), ("delete-offsets", None),
           ("dry-run", None), ("execute", None), ("export", None), ("to-offset", "0"),
           ("from-file", "offsets.csv"), ("to-datetime", "2020-01-01T00:00:00.000"), ("by-duration", "PT1H"),
           ("to-earliest", None), ("to-latest", None), ("to-current", None), ("shift-by", "-1"), ("members", None),
           ("verbose", None), ("offsets", None), ("state", None)),
    *_rows("kafka.admin.ReassignPartitionsCommand", "reassign-partitions",
           ("verify", None), ("generate", None), ("execute", None), ("cancel", None), ("list", None),
           ("bootstrap-server", "localhost:9092"), ("command-config", "client.properties"),
           ("zookeeper", "localhost:2181"), ("reassignment-json-file", "r.json"),
           ("topics-to-move-json-file", "t.json"), ("broker-list", "0,1"), ("disable-rack-aware", None),
           ("throttle", "1000"), ("replica-alter-log-dirs-throttle", "1000"), ("timeout", "10000"),
           ("additional", None), ("preserve-throttles", None)),
    *_rows("kafka.admin.LeaderElectionCommand", "leader-election",
           ("bootstrap-server", "localhost:9092"), ("admin.config", "admin.properties"),
           ("path-to-json-file", "p.json"), ("topic", "t"), ("partition", "0"), ("all-topic-partitions", None),
           ("election-type", "preferred")),
    *_rows("kafka.admin.PreferredReplicaLeaderElectionCommand", "preferred-replica-election",
           ("path-to-json-file", "p.json"), ("zookeeper", "localhost:2181"),
           ("bootstrap-server", "localhost:9092"), ("admin.config", "admin.properties")),
    *_rows("kafka.admin.DeleteRecordsCommand", "delete-records",
           ("bootstrap-server", "localhost:9092"), ("offset-json-file", "o.json"),
           ("command-config", "client.properties")),
    *_rows("kafka.admin.LogDirsCommand", "log-dirs",
           ("bootstrap-server", "localhost:9092"), ("command-config", "client.properties"), ("describe", None),
           ("topic-list", "t"), ("broker-list", "0")),
    *_rows("kafka.admin.BrokerApiVersionsCommand", "broker-api-versions",
           ("command-config", "client.properties"), ("bootstrap-server", "localhost:9092")),
    *_rows("kafka.tools.GetOffsetShell", "get-offsets",
           ("broker-list", "localhost:9092"), ("topic", "t"), ("partitions", "0,1"), ("time", "-1"),
           ("offsets", "1"), ("max-wait-ms", "1000")),
    *_rows("kafka.tools.DumpLogSegments", "dump-log",
           ("print-data-log", None), ("verify-index-only", None), ("index-sanity-check", None),
           ("files", "00000000000000000000.log"), ("max-message-size", "5242880"), ("deep-iteration", None),
           ("value-decoder-class", "kafka.serializer.StringDecoder"),
           ("key-decoder-class", "kafka.serializer.StringDecoder"),
           ("offsets-decoder", None), ("transaction-log-decoder", None)),
    *_rows("kafka.tools.ConsoleProducer", "produce",
           ("topic", "t"), ("broker-list", "localhost:9092"), ("bootstrap-server", "localhost:9092"), ("sync", None),
           ("compression-codec", "gzip"), ("batch-size", "200"), ("message-send-max-retries", "3"),
           ("retry-backoff-ms", "100"), ("timeout", "1000"), ("request-required-acks", "1"),
           ("request-timeout-ms", "1500"), ("metadata-expiry-ms", "300000"),
           ("max-block-ms", "60000",
            "--max-block-ms is not taken (librdkafka's produce never blocks); use --producer-property "
            "queue.buffering.max.messages=N"),
           ("max-memory-bytes", "33554432"), ("max-partition-memory-bytes", "16384"),
           ("line-reader", "kafka.tools.ConsoleProducer$LineMessageReader"), ("socket-buffer-size", "102400"),
           ("property", "parse.key=true"), ("producer-property", "linger.ms=5"),
           ("producer.config", "producer.properties")),
    *_rows("kafka.tools.ConsoleConsumer", "consume",
           ("topic", "t"),
           ("whitelist", "t.*"),
           ("partition", "0"), ("offset", "earliest"), ("consumer-property", "fetch.max.bytes=1048576"),
           ("consumer.config", "consumer.properties"), ("formatter", "kafka.tools.DefaultMessageFormatter"),
           ("property", "print.key=true"), ("from-beginning", None), ("max-messages", "1"), ("timeout-ms", "1000"),
           ("skip-message-on-error", None), ("bootstrap-server", "localhost:9092"),
           ("key-deserializer", "org.apache.kafka.common.serialization.StringDeserializer"),
           ("value-deserializer", "org.apache.kafka.common.serialization.StringDeserializer"),
           ("enable-systest-events", None,
            "--enable-systest-events is not implemented (no system-test JSON events); use --max-messages / "
            "--timeout-ms"),
           ("isolation-level", "read_committed"), ("group", "g")),
])


def options_of(command: str) -> list[KafkaOption]:
    """The rows of one kactor command."""
    return [o for o in OPTIONS if o.command == command]


class _Refused(argparse.Action):
    """A Kafka option kactor does not take: a usage error (exit 2) with the table's line."""

    def __init__(self, option_strings: Sequence[str], dest: str, refusal: str = "", **kwargs: Any) -> None:
        self.refusal = refusal
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(self.refusal)


def add_refusals(parser: argparse.ArgumentParser, command: str) -> None:
    """Put the command's refused Kafka options on its parser (hidden from --help)."""
    for o in options_of(command):
        if o.refusal is not None:
            parser.add_argument(f"--{o.name}", action=_Refused, refusal=o.refusal, dest=f"_refused_{o.name}",
                                nargs=0 if o.value is None else None, default=argparse.SUPPRESS,
                                help=argparse.SUPPRESS)
