"""``kactor consume``: kafka-console-consumer through Kafka's protocol (confluent-kafka / librdkafka).

``kactor consume --bootstrap-server HOST:PORT --topic T [--from-beginning] [--group G] [--max-messages N]
[--partition P [--offset earliest|latest|N]] [--timeout-ms MS] [--property print.key=true ...]`` prints each record
as Kafka's DefaultMessageFormatter does and, at the end, ``Processed a total of N messages`` on stderr.

As kafka-console-consumer: with ``--group`` the consumer subscribes as a member of that group (the group
coordinator assigns partitions, offsets are committed automatically and at exit) and ``--from-beginning`` only
applies when the group has no committed offset; with ``--partition`` it reads that partition alone from
``--offset`` (default latest). One departure: without ``--group`` Kafka's tool joins a random
``console-consumer-NNNNN`` group; here the consumer assigns itself every partition of the topic instead and
commits nothing (the same records printed, without leaving an abandoned group behind in ``__consumer_offsets``).
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import threading
import time
from typing import Any

from kactor.cli import CliError, kafka_options
from kactor.cli.client_properties import CONSUMER_SAME_NAME, Servers
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, kafka_errors, parse_properties, servers
from kactor.cli.message_formatter import FormatterError, MessageFormatter
from kactor.cli.support import usage_error
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, client_config, error_text, topic_partitions

POLL_S = 0.2
DEFAULT_FORMATTER = "kafka.tools.DefaultMessageFormatter"
STRING_DESERIALIZER = "org.apache.kafka.common.serialization.StringDeserializer"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "consume",
        description="Reads records from a topic with a Kafka consumer and prints them as kafka-console-consumer "
                    "does; 'Processed a total of N messages' goes to stderr at the end.")
    add_bootstrap_args(p)
    add_client_config_arg(p, "--consumer.config", "Consumer config properties file. Note that [consumer-property] "
                                                  "takes precedence over this config.")
    p.add_argument("--topic", default=None, help="The topic id to consume on.")
    p.add_argument("--whitelist", default=None, metavar="whitelist",
                   help="Regular expression specifying whitelist of topics to include for consumption (the consumer "
                        "subscribes to the topics it matches, as a member of --group or of a group of its own).")
    p.add_argument("--from-beginning", action="store_true",
                   help="start with the earliest record (when the group has no committed offset)")
    p.add_argument("--group", default=None, metavar="GROUP", help="consume as a member of this consumer group")
    p.add_argument("--partition", type=int, default=None, metavar="P",
                   help="consume this partition only, from --offset (default latest)")
    p.add_argument("--offset", default=None, metavar="OFFSET",
                   help="with --partition: a non-negative offset, 'earliest' or 'latest' (default latest)")
    p.add_argument("--max-messages", type=int, default=None, metavar="N", help="exit after N records")
    p.add_argument("--timeout-ms", type=int, default=None, metavar="MS",
                   help="exit when no record arrived for MS milliseconds")
    p.add_argument("--isolation-level", choices=("read_uncommitted", "read_committed"), default="read_uncommitted",
                   help="read_committed: only records of committed transactions (default read_uncommitted)")
    p.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                   help="formatter property: print.key, print.value, print.timestamp, print.partition, "
                        "print.offset, print.headers (true/false), key.separator, line.separator, ...")
    p.add_argument("--consumer-property", action="append", default=[], metavar="KEY=VALUE",
                   help="a consumer configuration property (librdkafka's names), e.g. fetch.max.bytes=1048576")
    p.add_argument("--metadata-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for the first metadata (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--formatter", default=DEFAULT_FORMATTER, metavar="class",
                   help=f"The name of a class to use for formatting kafka messages for display: only "
                        f"{DEFAULT_FORMATTER} (kactor loads no Java classes; --property print.* sets it up).")
    for option, what in (("--key-deserializer", "keys"), ("--value-deserializer", "values")):
        p.add_argument(option, default=None, metavar="deserializer",
                       help=f"only {STRING_DESERIALIZER}: {what} are printed as their bytes, which is what it "
                            "prints of UTF-8 text (kactor loads no Java classes)")
    p.add_argument("--skip-message-on-error", action="store_true",
                   help="If there is an error when processing a message, skip it instead of halt (taken: kactor's "
                        "formatter fails on no record).")
    kafka_options.add_refusals(p, "consume")
    p.set_defaults(func=run, _parser=p)


def start_offset(args: argparse.Namespace) -> int:
    """--offset / --from-beginning as a librdkafka start offset (OFFSET_BEGINNING / OFFSET_END or a number)."""
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END

    if args.offset is None:
        return OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    text = args.offset.strip().lower()
    if text == "earliest":
        return OFFSET_BEGINNING
    if text == "latest":
        return OFFSET_END
    if not text.isdigit():
        usage_error(args, f"--offset must be a non-negative number, 'earliest' or 'latest', not {args.offset!r}")
    return int(text)


def _validate(args: argparse.Namespace) -> tuple[Servers, MessageFormatter, dict[str, str]]:
    """Kafka's ConsoleConsumer checks, with its messages."""
    if (args.topic is None) == (args.whitelist is None):
        usage_error(args, "Exactly one of whitelist/topic is required.")
    if args.partition is not None and args.topic is None:
        usage_error(args, "The topic is required when partition is specified.")
    if args.formatter != DEFAULT_FORMATTER:
        usage_error(args, f"--formatter {args.formatter} is not taken (kactor loads no Java classes; "
                          f"{DEFAULT_FORMATTER} is built in); use --property print.key=true and the other print.*")
    for option, value in (("--key-deserializer", args.key_deserializer),
                          ("--value-deserializer", args.value_deserializer)):
        if value is not None and value != STRING_DESERIALIZER:
            usage_error(args, f"{option} {value} is not taken (kactor loads no Java classes); use "
                              f"{STRING_DESERIALIZER} or leave it out")
    if args.offset is not None and args.partition is None:
        usage_error(args, "The partition is required when offset is specified.")
    if args.offset is not None and args.from_beginning:
        usage_error(args, "Options from-beginning and offset cannot be specified together.")
    if args.partition is not None and args.partition < 0:
        usage_error(args, "--partition must not be negative")
    if args.max_messages is not None and args.max_messages < 1:
        usage_error(args, "--max-messages must be at least 1")
    if args.timeout_ms is not None and args.timeout_ms < 0:
        usage_error(args, "--timeout-ms must not be negative")
    if args.metadata_timeout <= 0:
        usage_error(args, "--metadata-timeout must be positive")
    target = servers(args, CONSUMER_SAME_NAME)
    # ConsoleConsumer: the --consumer.config file, then --consumer-property over it
    extra: dict[str, Any] = target.librdkafka()
    extra.update(parse_properties(args, "--consumer-property", args.consumer_property))
    if args.group is not None and "group.id" in extra and extra["group.id"] != args.group:
        usage_error(args, f"--group {args.group} and --consumer-property group.id={extra['group.id']} disagree")
    try:
        formatter = MessageFormatter.from_properties(parse_properties(args, "--property", args.property))
    except FormatterError as e:
        usage_error(args, str(e))
    return target, formatter, extra


def consumer_config(args: argparse.Namespace, servers: str, extra: dict[str, str]) -> dict[str, Any]:
    """The consumer's configuration (ConsoleConsumer.consumerProps): the group, auto.offset.reset from
    --from-beginning, isolation.level; without --group no commits. ``extra`` (the --consumer.config file's settings
    and --consumer-property, librdkafka's names) wins."""
    group = args.group or extra.get("group.id")
    conf = {
        "group.id": group or f"console-consumer-{random.randint(0, 99999)}",  # librdkafka needs one; unused then
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
        "enable.auto.commit": group is not None,
        "isolation.level": args.isolation_level,
    }
    conf.update(extra)
    return client_config(servers, "console-consumer", conf)


def run(args: argparse.Namespace) -> int:
    target, formatter, extra = _validate(args)
    servers = target.bootstrap
    offset = start_offset(args)
    from confluent_kafka import Consumer

    with kafka_errors():
        try:
            consumer = Consumer(consumer_config(args, servers, extra))
        except (ValueError, TypeError) as e:  # librdkafka refused a --consumer-property
            raise CliError(f"invalid consumer configuration: {e}") from None
    try:
        with kafka_errors():
            _assign(consumer, args, servers, offset, extra)
    except BaseException:
        consumer.close()
        raise
    count = 0
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with kafka_errors():
            count = _consume(consumer, args, formatter, stop)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        consumer.close()  # commits the group's offsets (enable.auto.commit) and leaves the group
        print(f"Processed a total of {count} messages", file=sys.stderr, flush=True)
    return 0


def _assign(consumer: Any, args: argparse.Namespace, servers: str, offset: int, extra: dict[str, str]) -> None:
    """Check the topic (and partition) in the cluster's metadata, then subscribe (a group) or assign."""
    from confluent_kafka import TopicPartition

    if args.whitelist is not None:
        consumer.subscribe([subscription_pattern(args.whitelist)])
        return
    partitions = topic_partitions(consumer, servers, args.topic, args.partition, args.metadata_timeout)
    if args.partition is None and (args.group is not None or "group.id" in extra):
        consumer.subscribe([args.topic])
    else:
        consumer.assign([TopicPartition(args.topic, p, offset) for p in partitions])


def subscription_pattern(whitelist: str) -> str:
    """ConsoleConsumer's consumer.subscribe(Pattern.compile(whitelist)) as librdkafka takes a pattern subscription: a
    topic name starting with '^', anchored at the end too, since Java's consumer matches the whole topic name
    (Pattern.matcher(topic).matches())."""
    return f"^({whitelist})$"


def _consume(consumer: Any, args: argparse.Namespace, formatter: MessageFormatter, stop: threading.Event) -> int:
    """Poll and print until --max-messages, --timeout-ms without a record, a signal, or a closed stdout."""
    count = 0
    out = sys.stdout.buffer
    last = time.monotonic()
    warned: set[str] = set()
    while not stop.is_set() and (args.max_messages is None or count < args.max_messages):
        if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= args.timeout_ms:
            break  # ConsoleConsumer: a TimeoutException ends the loop, and the count is reported
        batch = consumer.consume(num_messages=min(500, (args.max_messages or 500) - count), timeout=POLL_S)
        for msg in batch:
            error = msg.error()
            if error is not None:
                _on_error(error, warned)
                continue
            last = time.monotonic()
            try:
                out.write(formatter.format(key=msg.key(), value=msg.value(), partition=msg.partition(),
                                           offset=msg.offset(), timestamp=msg.timestamp(), headers=msg.headers()))
            except BrokenPipeError:
                print("Unable to write to standard out, closing consumer.", file=sys.stderr)
                return count
            count += 1
        try:
            out.flush()
        except BrokenPipeError:
            return count
    return count


def _on_error(error: Any, warned: set[str]) -> None:
    """A consumer error: fatal ones end the command; transient ones (a broker down, a leader moving) are said
    once on stderr while librdkafka retries."""
    if error.fatal() or error.name() in ("UNKNOWN_TOPIC_OR_PART", "TOPIC_AUTHORIZATION_FAILED",
                                         "GROUP_AUTHORIZATION_FAILED", "INVALID_GROUP_ID"):
        raise CliError(error_text(error))
    if error.name() == "_PARTITION_EOF":
        return
    text = error_text(error)
    if text not in warned:
        warned.add(text)
        print(f"kactor consume: {text} (retrying)", file=sys.stderr, flush=True)
