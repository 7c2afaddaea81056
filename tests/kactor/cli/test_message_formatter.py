"""kactor consume's record format: Kafka's DefaultMessageFormatter (column order, separators, null and timestamps)."""

from __future__ import annotations

import pytest

from kactor.cli.message_formatter import FormatterError, MessageFormatter


def test_default_prints_the_value_and_a_newline() -> None:
    f = MessageFormatter.from_properties({})
    assert f.format(key=b"k", value=b"hello", partition=3, offset=7) == b"hello\n"


def test_every_column_in_kafkas_order_with_the_key_separator_between() -> None:
    f = MessageFormatter.from_properties({
        "print.timestamp": "true", "print.partition": "TRUE", "print.offset": "true", "print.headers": "true",
        "print.key": "true", "key.separator": "|"})
    line = f.format(key=b"k1", value=b"v1", partition=2, offset=41, timestamp=(1, 1700000000123),
                    headers=[("h1", b"x"), ("h2", None)])
    assert line == b"CreateTime:1700000000123|Partition:2|Offset:41|h1:x,h2:null|k1|v1\n"


def test_null_key_and_value_print_the_null_literal() -> None:
    f = MessageFormatter.from_properties({"print.key": "true", "null.literal": "<none>"})
    assert f.format(key=None, value=None, partition=0, offset=0) == b"<none>\t<none>\n"


def test_log_append_time_and_no_timestamp() -> None:
    f = MessageFormatter.from_properties({"print.timestamp": "true"})
    assert f.format(key=None, value=b"v", partition=0, offset=0, timestamp=(2, 5)) == b"LogAppendTime:5\tv\n"
    assert f.format(key=None, value=b"v", partition=0, offset=0, timestamp=(0, -1)) == b"NO_TIMESTAMP\tv\n"


def test_without_the_value_the_last_column_ends_the_line() -> None:
    f = MessageFormatter.from_properties({"print.value": "false", "print.offset": "true", "print.key": "true",
                                          "line.separator": ";"})
    assert f.format(key=b"k", value=b"v", partition=0, offset=9) == b"Offset:9\tk;"
    assert MessageFormatter.from_properties({"print.value": "false"}).format(
        key=b"k", value=b"v", partition=0, offset=0) == b""


def test_no_headers() -> None:
    f = MessageFormatter.from_properties({"print.headers": "true"})
    assert f.format(key=None, value=b"v", partition=0, offset=0, headers=None) == b"NO_HEADERS\tv\n"


@pytest.mark.parametrize(("props", "message"), [
    ({"print.kye": "true"}, "unknown --property print.kye"),
    ({"print.key": "yes"}, "print.key must be true or false"),
])
def test_bad_properties_are_refused_clearly(props: dict[str, str], message: str) -> None:
    with pytest.raises(FormatterError, match=message):
        MessageFormatter.from_properties(props)
