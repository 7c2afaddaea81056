"""How ``kactor consume`` prints a record: Kafka's DefaultMessageFormatter (kafka.tools.DefaultMessageFormatter,
kafka-console-consumer's ``--property`` names and output, with 2.7's print.partition / print.offset / print.headers).
"""

from __future__ import annotations

import attrs

# (property, default) as DefaultMessageFormatter.init reads them
_BOOLEAN = {"print.timestamp": False, "print.key": False, "print.value": True, "print.partition": False,
            "print.offset": False, "print.headers": False}
_TEXT = {"key.separator": "\t", "line.separator": "\n", "headers.separator": ",", "headers.key.separator": ":",
         "null.literal": "null"}
PROPERTIES = (*_BOOLEAN, *_TEXT)
# confluent_kafka's timestamp types (TIMESTAMP_NOT_AVAILABLE, TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME)
# as Kafka's TimestampType prints them
TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


class FormatterError(ValueError):
    """A --property the formatter does not know, or a boolean that is not true/false."""


@attrs.frozen(slots=True)
class MessageFormatter:
    """DefaultMessageFormatter's settings."""

    print_timestamp: bool = False
    print_key: bool = False
    print_value: bool = True
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    headers_key_separator: bytes = b":"
    null_literal: bytes = b"null"

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> MessageFormatter:
        """DefaultMessageFormatter.init: booleans parsed case-insensitively ("true"/"false"); unknown names are
        refused (Kafka ignores them silently, which hides a typo)."""
        unknown = sorted(set(props) - set(PROPERTIES))
        if unknown:
            raise FormatterError(f"unknown --property {', '.join(unknown)} (known: {', '.join(PROPERTIES)})")
        values: dict[str, object] = {}
        for name in _BOOLEAN:
            if name in props:
                text = props[name].strip().lower()
                if text not in ("true", "false"):
                    raise FormatterError(f"--property {name} must be true or false, not {props[name]!r}")
                values[name.replace(".", "_")] = text == "true"
        for name in _TEXT:
            if name in props:
                values[name.replace(".", "_")] = props[name].encode()
        return cls(**values)  # type: ignore[arg-type]

    def format(self, *, key: bytes | None, value: bytes | None, partition: int, offset: int,
               timestamp: tuple[int, int] = (0, -1), headers: list[tuple[str, bytes | None]] | None = None) -> bytes:
        """DefaultMessageFormatter.writeTo: the enabled columns in Kafka's order (timestamp, partition, offset,
        headers, key, value), each followed by key.separator when another column follows, else line.separator."""
        columns: list[bytes] = []
        if self.print_timestamp:
            kind, ts = timestamp
            columns.append(f"{TIMESTAMP_TYPES[kind]}:{ts}".encode() if kind in TIMESTAMP_TYPES else b"NO_TIMESTAMP")
        if self.print_partition:
            columns.append(f"Partition:{partition}".encode())
        if self.print_offset:
            columns.append(f"Offset:{offset}".encode())
        if self.print_headers:
            columns.append(self.headers_separator.join(
                k.encode() + self.headers_key_separator + (self.null_literal if v is None else v)
                for k, v in headers) if headers else b"NO_HEADERS")
        if self.print_key:
            columns.append(self.null_literal if key is None else key)
        if self.print_value:
            columns.append(self.null_literal if value is None else value)
        if not columns:
            return b""
        return self.key_separator.join(columns) + self.line_separator
