"""``kactor produce --bootstrap-server``: kafka-console-producer / kafka-producer-perf-test through Kafka's protocol
(confluent-kafka / librdkafka), printing what the cluster acknowledged.

Records come from ``--count N`` (values ``<value-prefix><i>``, or exactly ``--record-size`` bytes, spread
round-robin over the partitions as the ZooKeeper form does, or all to ``--partition``) or else from stdin, one per
line as kafka-console-producer reads them (``--property parse.key=true`` splits a key off at ``key.separator``,
keyed records go to Kafka's murmur2 partition). The producer waits for ``--acks`` (Kafka's acks: 0, 1, -1/all) and
retries a retriable error as kcat does — librdkafka's own retries, unbounded but by the delivery timeout (a leader that
moved, a broker down, a topic being auto-created), unless ``--retries`` bounds them; at the end one line per partition
says how many records were acknowledged and at which offsets, and records that were not get their error and exit 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from kactor.cli import CliError
from kactor.cli.client_properties import PRODUCER_SAME_NAME, Servers
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, kafka_errors, parse_properties, servers
from kactor.cli.support import usage_error
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, KafkaClientError, client_config, error_text, topic_partitions

COMPRESSION = ("none", "gzip", "snappy", "lz4", "zstd")
LINE_READER = "kafka.tools.ConsoleProducer$LineMessageReader"  # ConsoleProducer's default --line-reader
# ConsoleProducer's options that set a producer property (ConsoleProducer.producerProps' maybeMergeOptions: given,
# they win over --producer-property), under librdkafka's name of that property
PRODUCER_OPTIONS: dict[str, tuple[str, type]] = {
    "timeout": ("linger.ms", int),
    "retry-backoff-ms": ("retry.backoff.ms", int),
    "socket-buffer-size": ("socket.send.buffer.bytes", int),
    "max-partition-memory-bytes": ("batch.size", int),
    "metadata-expiry-ms": ("metadata.max.age.ms", int),
    "max-memory-bytes": ("queue.buffering.max.kbytes", int),  # buffer.memory: librdkafka counts kilobytes
}
LINE_READER_PROPERTIES = ("parse.key", "key.separator", "ignore.error")
DELIVERY_TIMEOUT_MS = 120000  # Kafka's delivery.timeout.ms
# a topic's metadata errors after which librdkafka asks again rather than failing the records
RETRIABLE_TOPIC_ERRORS = ("LEADER_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PART", "NOT_LEADER_FOR_PARTITION",
                          "REQUEST_TIMED_OUT")


def add_args(parser: argparse.ArgumentParser) -> None:
    """The options of the --bootstrap-server form (those it shares with the ZooKeeper form are that form's)."""
    add_bootstrap_args(parser, required=False)
    add_client_config_arg(parser, "--producer.config", "Producer config properties file. Note that "
                                                       "[producer-property] takes precedence over this config.")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="with --bootstrap-server, stdin lines: parse.key=true, key.separator=TEXT (default tab)")
    parser.add_argument("--producer-property", action="append", default=[], metavar="KEY=VALUE",
                        help="with --bootstrap-server: a producer configuration property (librdkafka's names), "
                             "e.g. linger.ms=5")
    parser.add_argument("--compression-codec", choices=COMPRESSION, default="none", nargs="?", const="gzip",
                        help="with --bootstrap-server: the record batches' compression (default none; without a "
                             "value gzip, as ConsoleProducer)")
    parser.add_argument("--broker-list", metavar="broker-list",
                        help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
    parser.add_argument("--sync", action="store_true",
                        help="If set message send requests to the brokers are synchronously, one at a time as they "
                             "arrive.")
    parser.add_argument("--batch-size", type=int, default=200, metavar="size",
                        help="Number of messages to send in a single batch if they are not being sent synchronously "
                             "(taken and unused, as by 2.6.3's ConsoleProducer).")
    parser.add_argument("--line-reader", default=LINE_READER, metavar="reader_class",
                        help=f"The class name of the class to use for reading lines from standard in: only "
                             f"{LINE_READER} (kactor loads no Java classes).")
    parser.add_argument("--request-required-acks", choices=("0", "1", "-1", "all"), default=None,
                        metavar="request required acks", help="The required acks of the producer requests (--acks)")
    parser.add_argument("--request-timeout-ms", type=int, default=None, metavar="request timeout ms",
                        help="The ack timeout of the producer requests, in ms (--request-timeout in seconds)")
    parser.add_argument("--message-send-max-retries", type=int, default=None, metavar="retries",
                        help="the number of retries before the producer gives up and drops the message (--retries)")
    for option, (name, kind) in PRODUCER_OPTIONS.items():
        parser.add_argument(f"--{option}", type=kind, default=None, metavar=option.rsplit("-", 1)[-1],
                            help=f"with --bootstrap-server: the producer's {name}, as ConsoleProducer sets it")
    parser.add_argument("--record-size", type=int, default=None, metavar="BYTES",
                        help="with --bootstrap-server --count: values of exactly BYTES bytes (perf-test)")
    parser.add_argument("--throughput", type=float, default=None, metavar="N",
                        help="with --bootstrap-server --count: at most N records/s (default unthrottled)")
    parser.add_argument("--metadata-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"with --bootstrap-server: seconds to wait for the first metadata "
                             f"(default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--print-offsets", action="store_true",
                        help="with --bootstrap-server: one line per acknowledged record: topic-partition@offset")


@attrs.define
class PartitionAcks:
    """What the delivery reports said about one partition's records."""

    acked: int = 0
    first_offset: int = -1
    last_offset: int = -1
    failed: int = 0
    errors: dict[str, int] = attrs.Factory(dict)

    def on_delivery(self, error: Any, offset: int) -> None:
        if error is not None:
            self.failed += 1
            text = error_text(error)
            self.errors[text] = self.errors.get(text, 0) + 1
            return
        self.acked += 1
        if offset >= 0:
            self.first_offset = offset if self.first_offset < 0 else min(self.first_offset, offset)
            self.last_offset = max(self.last_offset, offset)

    def line(self, topic: str, partition: int, acks: str) -> str:
        parts = []
        if self.acked:
            where = (f"at offsets {self.first_offset}..{self.last_offset}" if self.first_offset >= 0
                     else "(acks=0: offsets unknown)")
            parts.append(f"{self.acked} record{'s' if self.acked != 1 else ''} acknowledged {where}")
        if self.failed:
            parts.append(f"{self.failed} NOT acknowledged: " + "; ".join(
                f"{text} ({n})" for text, n in sorted(self.errors.items())))
        return f"{topic}-{partition}: " + ", ".join(parts) + f" (acks={acks})"


def producer_config(args: argparse.Namespace, servers: str, connection: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """The producer's configuration from the flags, then ``connection`` (the --producer.config file's settings),
    then --producer-property, which wins (ConsoleProducer.producerProps)."""
    conf: dict[str, Any] = {
        "acks": "all" if args.acks in ("-1", "all") else args.acks,
        "compression.type": args.compression_codec,
        "request.timeout.ms": int(args.request_timeout * 1000),
        "delivery.timeout.ms": DELIVERY_TIMEOUT_MS,
        "partitioner": "murmur2_random",  # Kafka's DefaultPartitioner for keyed records
        "enable.idempotence": False,  # Kafka 2.6's producer default
    }
    if args.retries is not None:  # otherwise librdkafka's default (INT32_MAX): bounded by delivery.timeout.ms only
        conf["retries"] = args.retries
    conf.update(connection or {})
    conf.update(parse_properties(args, "--producer-property", args.producer_property))
    for option, (name, _kind) in PRODUCER_OPTIONS.items():
        value = getattr(args, option.replace("-", "_"), None)
        if value is not None:
            if name == "queue.buffering.max.kbytes":
                value = max(1, value // 1024)
            conf[name] = value
    return client_config(servers, "console-producer", conf)


def _validate(args: argparse.Namespace) -> tuple[Servers, dict[str, str]]:
    target = servers(args, PRODUCER_SAME_NAME)
    if args.count is not None and args.count < 1:
        usage_error(args, "--count must be at least 1")
    if args.partition is not None and args.partition < 0:
        usage_error(args, "--partition must not be negative")
    if args.request_timeout <= 0 or args.metadata_timeout <= 0:
        usage_error(args, "--request-timeout and --metadata-timeout must be positive")
    if args.record_size is not None and (args.count is None or args.record_size < 1):
        usage_error(args, "--record-size needs --count and must be at least 1")
    if args.throughput is not None and (args.count is None or args.throughput <= 0):
        usage_error(args, "--throughput needs --count and must be positive")
    if args.line_reader != LINE_READER:
        usage_error(args, f"--line-reader {args.line_reader} is not taken (kactor loads no Java classes); use "
                          "--property parse.key=true,key.separator=...")
    props = parse_properties(args, "--property", args.property)
    unknown = sorted(set(props) - set(LINE_READER_PROPERTIES))
    if unknown:
        usage_error(args, f"unknown --property {', '.join(unknown)} (known: {', '.join(LINE_READER_PROPERTIES)})")
    if props and args.count is not None:
        usage_error(args, "--property parses stdin lines; it can't be used with --count")
    return target, props


def counted_records(args: argparse.Namespace, partitions: list[int]) -> Iterator[tuple[int | None, None, bytes]]:
    """(partition, key, value) of --count records: round-robin over ``partitions`` as the ZooKeeper form."""
    for i in range(args.count):
        value = f"{args.value_prefix}{i}".encode()
        if args.record_size is not None:
            value = value[:args.record_size].ljust(args.record_size, b".")
        yield partitions[i % len(partitions)], None, value


def line_records(lines: Iterator[bytes], props: dict[str, str],
                 partition: int | None) -> Iterator[tuple[int | None, bytes | None, bytes]]:
    """(partition, key, value) per stdin line (LineMessageReader): the line without its end; with parse.key the
    key before the first key.separator, and a line without one is an error."""
    parse_key = props.get("parse.key", "false").strip().lower() == "true"
    separator = props.get("key.separator", "\t").encode()
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip(b"\r\n") if raw.endswith(b"\n") else raw
        if not parse_key:
            yield partition, None, line
            continue
        key, sep, value = line.partition(separator)
        if not sep:
            raise CliError(f"No key found on line {n}: {line.decode(errors='replace')}")
        yield partition, key, value


def run(args: argparse.Namespace) -> int:
    target, props = _validate(args)
    servers = target.bootstrap
    from confluent_kafka import Producer

    with kafka_errors():
        try:
            producer = Producer(producer_config(args, servers, target.librdkafka()))
        except (ValueError, TypeError) as e:
            raise CliError(f"invalid producer configuration: {e}") from None
        partitions = _partitions(producer, servers, args)
        records = (counted_records(args, partitions) if args.count is not None
                   else line_records(iter(sys.stdin.buffer.readline, b""), props, args.partition))
        acks = _send(producer, args, records)
    acks_name = "all" if args.acks in ("-1", "all") else args.acks
    failed = 0
    for p in sorted(acks):
        print(acks[p].line(args.topic, p, acks_name), flush=True)
        failed += acks[p].failed
    if failed:
        raise CliError(f"{failed} of {sum(a.acked + a.failed for a in acks.values())} records were not acknowledged")
    return 0


def _partitions(producer: Any, servers: str, args: argparse.Namespace) -> list[int]:
    """The topic's partitions once its metadata has them, as librdkafka waits for a topic's metadata before it sends:
    a topic that the broker is auto-creating (LEADER_NOT_AVAILABLE, or not yet known) is asked again until
    --metadata-timeout, then the last error is the answer."""
    deadline = time.monotonic() + args.metadata_timeout
    remaining = args.metadata_timeout
    while True:
        try:
            return topic_partitions(producer, servers, args.topic, args.partition, remaining)
        except KafkaClientError as e:
            retriable = str(e).endswith("does not exist") or any(name in str(e) for name in RETRIABLE_TOPIC_ERRORS)
            if not retriable or time.monotonic() >= deadline:
                raise
        time.sleep(0.2)
        remaining = max(0.1, deadline - time.monotonic())


def _send(producer: Any, args: argparse.Namespace,
          records: Iterator[tuple[int | None, bytes | None, bytes]]) -> dict[int, PartitionAcks]:
    """Produce every record (waiting for room when librdkafka's queue is full), then flush; the delivery reports
    per partition."""
    acks: dict[int, PartitionAcks] = {}

    def on_delivery(error: Any, msg: Any) -> None:
        acks.setdefault(msg.partition(), PartitionAcks()).on_delivery(error, msg.offset())
        if args.print_offsets and error is None:
            print(f"{msg.topic()}-{msg.partition()}@{msg.offset()}", flush=True)

    started = time.monotonic()
    for i, (partition, key, value) in enumerate(records):
        if args.throughput is not None:
            delay = started + i / args.throughput - time.monotonic()
            if delay > 0:
                producer.poll(delay)
        kwargs: dict[str, Any] = {"value": value, "key": key, "on_delivery": on_delivery}
        if partition is not None:
            kwargs["partition"] = partition
        while True:
            try:
                producer.produce(args.topic, **kwargs)
                break
            except BufferError:  # the local queue is full: serve delivery reports until there is room
                producer.poll(0.1)
        if args.sync:  # ConsoleProducer.send: producer.send(record).get()
            producer.flush()
        producer.poll(0)
    remaining = producer.flush(DELIVERY_TIMEOUT_MS / 1000 + 5)
    if remaining:
        raise CliError(f"{remaining} records were still waiting for an answer after "
                       f"{DELIVERY_TIMEOUT_MS / 1000:g} s (delivery.timeout.ms)")
    return acks
