"""kactor produce --bootstrap-server without a cluster: the records it would send (--count round-robin and
--record-size, stdin lines with parse.key), the acknowledgement lines, argument checks and an unreachable server."""

from __future__ import annotations

import argparse

import pytest

from kactor.cli import CliError, main
from kactor.cli.produce_kafka import PartitionAcks, counted_records, line_records, producer_config
from zk_bridge.server import free_port


def _usage(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["produce", *argv])
    assert e.value.code == 2
    return capsys.readouterr().err


def test_counted_records_go_round_robin_with_their_index() -> None:
    args = argparse.Namespace(count=5, value_prefix="r-", record_size=None)
    assert list(counted_records(args, [0, 1, 2])) == [
        (0, None, b"r-0"), (1, None, b"r-1"), (2, None, b"r-2"), (0, None, b"r-3"), (1, None, b"r-4")]


def test_record_size_pads_or_cuts_the_value_to_exactly_that_many_bytes() -> None:
    args = argparse.Namespace(count=2, value_prefix="record-", record_size=10)
    assert [v for _, _, v in counted_records(args, [4])] == [b"record-0..", b"record-1.."]
    args.record_size = 3
    assert [v for _, _, v in counted_records(args, [4])] == [b"rec", b"rec"]


def test_stdin_lines_are_records_and_parse_key_splits_at_the_first_separator() -> None:
    assert list(line_records(iter([b"a\n", b"b c\r\n", b"last"]), {}, None)) == [
        (None, None, b"a"), (None, None, b"b c"), (None, None, b"last")]
    keyed = line_records(iter([b"k1:v:1\n", b":empty\n"]), {"parse.key": "true", "key.separator": ":"}, 2)
    assert list(keyed) == [(2, b"k1", b"v:1"), (2, b"", b"empty")]


def test_a_line_without_a_key_is_an_error_naming_the_line() -> None:
    with pytest.raises(CliError, match="No key found on line 2: nokey"):
        list(line_records(iter([b"k\tv\n", b"nokey\n"]), {"parse.key": "true"}, None))


def test_acknowledgement_lines() -> None:
    acks = PartitionAcks()
    for offset in (7, 5, 6):
        acks.on_delivery(None, offset)
    assert acks.line("orders", 1, "all") == "orders-1: 3 records acknowledged at offsets 5..7 (acks=all)"

    class Err:
        def name(self) -> str:
            return "NOT_ENOUGH_REPLICAS"

        def str(self) -> str:
            return "Broker: Not enough in-sync replicas"
    acks.on_delivery(Err(), -1)
    assert acks.line("orders", 1, "all") == (
        "orders-1: 3 records acknowledged at offsets 5..7, 1 NOT acknowledged: NOT_ENOUGH_REPLICAS: Broker: Not "
        "enough in-sync replicas (1) (acks=all)")
    zero = PartitionAcks()
    zero.on_delivery(None, -1)
    assert zero.line("t", 0, "0") == "t-0: 1 record acknowledged (acks=0: offsets unknown) (acks=0)"


def test_producer_config_from_the_flags() -> None:
    args = argparse.Namespace(acks="-1", compression_codec="lz4", request_timeout=2.5, retries=3,
                              producer_property=["linger.ms=5", "acks=1"])
    conf = producer_config(args, "127.0.0.1:9092")
    assert (conf["compression.type"], conf["request.timeout.ms"], conf["retries"]) == ("lz4", 2500, 3)
    assert (conf["linger.ms"], conf["acks"]) == ("5", "1")  # --producer-property wins
    args.producer_property = []
    assert producer_config(args, "127.0.0.1:9092")["acks"] == "all"


def test_without_retries_librdkafkas_own_retry_as_kcat() -> None:
    """kcat sets no retries: librdkafka retries a retriable error until delivery.timeout.ms (its retries default is
    INT32_MAX); kactor produce --bootstrap-server leaves it so unless --retries is given."""
    from confluent_kafka import Producer

    args = argparse.Namespace(acks="1", compression_codec="none", request_timeout=30.0, retries=None,
                              producer_property=[])
    conf = producer_config(args, "127.0.0.1:9092")
    assert "retries" not in conf and "message.send.max.retries" not in conf
    assert conf["delivery.timeout.ms"] == 120000
    Producer(conf)  # librdkafka accepts the configuration as it is


@pytest.mark.parametrize(("argv", "message"), [
    (["--topic", "t", "--count", "1"], "one of --bootstrap-server or --zookeeper is required"),
    (["--topic", "t", "--zookeeper", "127.0.0.1:2181", "--bootstrap-server", "127.0.0.1:9092", "--count", "1"],
     "can't be used together"),
    (["--topic", "t", "--zookeeper", "127.0.0.1:2181"], "--count is required with --zookeeper"),
    (["--topic", "t", "--zookeeper", "127.0.0.1:2181", "--count", "1", "--acks", "0"], "--acks 0 needs"),
    (["--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--count", "0"], "--count must be at least 1"),
    (["--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--record-size", "10"], "--record-size needs --count"),
    (["--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--property", "parse.kee=true"],
     "unknown --property parse.kee"),
    (["--topic", "t", "--bootstrap-server", "127.0.0.1:9092", "--count", "2", "--property", "parse.key=true"],
     "can't be used with --count"),
    (["--topic", "t", "--bootstrap-server", "nohost", "--count", "2"], "--bootstrap-server: 'nohost' is not"),
])
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                            message: str) -> None:
    err = _usage(capsys, *argv)
    assert message in err and err.count("\n") == 1, err


def test_an_unreachable_bootstrap_server_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    code = main(["produce", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t", "--count", "1",
                 "--metadata-timeout", "1"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(f"kactor produce: cannot get metadata from the bootstrap server(s) 127.0.0.1:{port} "
                          "within 1 s") and err.count("\n") == 1
