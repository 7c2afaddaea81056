"""kafka-console-producer's options of 2.6.3 under their own names: --broker-list, --request-required-acks,
--request-timeout-ms, --message-send-max-retries become kactor's, the property-setting ones
(ConsoleProducer.producerProps' maybeMergeOptions) the producer's librdkafka settings — winning over
--producer-property, as there — --sync waits for each record, --compression-codec alone is gzip, --batch-size is
taken unused as in 2.6.3, and a --line-reader class other than LineMessageReader is refused in one line.
kafka-console-consumer's --formatter, --key-deserializer / --value-deserializer and --skip-message-on-error: taken
for what kactor's consumer does (DefaultMessageFormatter, StringDeserializer's text), any other class refused."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from kactor.cli import build_parser
from kactor.cli.cmd_produce import kafka_names
from kactor.cli.produce_kafka import _send, producer_config


def _args(*argv: str) -> argparse.Namespace:
    full = ["produce", "--topic", "t", *argv]
    args = build_parser(full).parse_args(full)
    kafka_names(args)
    return args


def test_kafka_names_become_kactors_options() -> None:
    args = _args("--broker-list", "127.0.0.1:9092", "--request-required-acks", "all", "--request-timeout-ms", "1500",
                 "--message-send-max-retries", "3")
    assert (args.bootstrap_server, args.acks, args.request_timeout, args.retries) == ("127.0.0.1:9092", "all", 1.5, 3)
    # --broker-list is ignored beside --bootstrap-server
    assert _args("--bootstrap-server", "127.0.0.1:9093", "--broker-list", "127.0.0.1:9092").bootstrap_server == \
        "127.0.0.1:9093"


def test_property_options_set_the_producers_settings() -> None:
    from confluent_kafka import Producer

    args = _args("--bootstrap-server", "127.0.0.1:9092", "--timeout", "7", "--retry-backoff-ms", "250",
                 "--socket-buffer-size", "65536", "--max-partition-memory-bytes", "32768",
                 "--metadata-expiry-ms", "60000", "--max-memory-bytes", "33554432", "--request-required-acks", "-1",
                 "--producer-property", "linger.ms=1", "--compression-codec", "--batch-size", "50")
    conf = producer_config(args, "127.0.0.1:9092")
    assert {k: conf[k] for k in ("linger.ms", "retry.backoff.ms", "socket.send.buffer.bytes", "batch.size",
                                 "metadata.max.age.ms", "queue.buffering.max.kbytes", "acks", "compression.type")} == {
        "linger.ms": 7, "retry.backoff.ms": 250, "socket.send.buffer.bytes": 65536, "batch.size": 32768,
        "metadata.max.age.ms": 60000, "queue.buffering.max.kbytes": 32768, "acks": "all",
        "compression.type": "gzip"}
    Producer(conf)  # librdkafka takes every one of them


class _Producer:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def produce(self, topic: str, **kwargs: Any) -> None:
        self.calls.append(f"produce {kwargs['value'].decode()}")

    def flush(self, timeout: float = -1) -> int:
        self.calls.append("flush")
        return 0

    def poll(self, timeout: float = 0) -> int:
        return 0


@pytest.mark.parametrize(("sync", "calls"), [
    (True, ["produce a", "flush", "produce b", "flush", "flush"]),
    (False, ["produce a", "produce b", "flush"]),
])
def test_sync_waits_for_each_record(sync: bool, calls: list[str]) -> None:
    producer = _Producer()
    args = _args("--bootstrap-server", "127.0.0.1:9092", *(["--sync"] if sync else []))
    _send(producer, args, iter([(None, None, b"a"), (None, None, b"b")]))
    assert producer.calls == calls


def test_a_line_reader_class_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli import main

    with pytest.raises(SystemExit) as e:
        main(["produce", "--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--line-reader", "com.example.R"])
    assert (e.value.code, capsys.readouterr().err) == (
        2, "kactor produce: error: --line-reader com.example.R is not taken (kactor loads no Java classes); use "
           "--property parse.key=true,key.separator=...\n")


def test_the_consumers_formatter_and_deserializers_as_kactor_prints() -> None:
    from kactor.cli.cmd_consume import _validate

    argv = ["consume", "--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--formatter",
            "kafka.tools.DefaultMessageFormatter", "--key-deserializer",
            "org.apache.kafka.common.serialization.StringDeserializer", "--value-deserializer",
            "org.apache.kafka.common.serialization.StringDeserializer", "--skip-message-on-error",
            "--property", "print.key=true"]
    _target, formatter, _extra = _validate(build_parser(argv).parse_args(argv))
    assert formatter.format(key=b"k", value=b"v", partition=0, offset=0) == b"k\tv\n"


@pytest.mark.parametrize(("option", "value", "line"), [
    ("--formatter", "kafka.tools.LoggingMessageFormatter",
     "--formatter kafka.tools.LoggingMessageFormatter is not taken (kactor loads no Java classes; "
     "kafka.tools.DefaultMessageFormatter is built in); use --property print.key=true and the other print.*"),
    ("--value-deserializer", "org.apache.kafka.common.serialization.LongDeserializer",
     "--value-deserializer org.apache.kafka.common.serialization.LongDeserializer is not taken (kactor loads no "
     "Java classes); use org.apache.kafka.common.serialization.StringDeserializer or leave it out"),
])
def test_another_consumer_class_is_refused_in_one_line(option: str, value: str, line: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli import main

    with pytest.raises(SystemExit) as e:
        main(["consume", "--topic", "t", "--bootstrap-server", "127.0.0.1:9092", option, value])
    assert (e.value.code, capsys.readouterr().err) == (2, f"kactor consume: error: {line}\n")


def test_whitelist_is_a_whole_name_pattern_subscription() -> None:
    from kactor.cli.cmd_consume import _assign, subscription_pattern

    assert subscription_pattern("orders|audit.*") == "^(orders|audit.*)$"

    class Consumer:
        subscribed: list[str] = []

        def subscribe(self, topics: list[str]) -> None:
            self.subscribed = topics

    argv = ["consume", "--whitelist", "orders|audit.*", "--bootstrap-server", "127.0.0.1:9092"]
    consumer = Consumer()
    _assign(consumer, build_parser(argv).parse_args(argv), "127.0.0.1:9092", -1, {})
    assert consumer.subscribed == ["^(orders|audit.*)$"]


@pytest.mark.parametrize(("argv", "line"), [
    ([], "Exactly one of whitelist/topic is required."),
    (["--topic", "t", "--whitelist", "t.*"], "Exactly one of whitelist/topic is required."),
    (["--whitelist", "t.*", "--partition", "0"], "The topic is required when partition is specified."),
])
def test_topic_or_whitelist_as_console_consumer_checks(argv: list[str], line: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli import main

    with pytest.raises(SystemExit) as e:
        main(["consume", "--bootstrap-server", "127.0.0.1:9092", *argv])
    assert (e.value.code, capsys.readouterr().err) == (2, f"kactor consume: error: {line}\n")
