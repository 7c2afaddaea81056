"""Typed errors of the wire layer and the Kafka error codes they answer with (``o.a.k.common.protocol.Errors``).

Every failure of decoding bytes from a socket raises a ``ProtocolError`` subclass; nothing else escapes the decoders.
"""

from __future__ import annotations

# Kafka's error codes used by the wire layer (Errors.java).
NONE = 0
CORRUPT_MESSAGE = 2
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
UNSUPPORTED_COMPRESSION_TYPE = 76
INVALID_RECORD = 87


class ProtocolError(Exception):
    """Bytes that are not a valid Kafka frame, header, message or record batch. ``error_code`` is Kafka's answer."""

    error_code = INVALID_REQUEST


class TruncatedError(ProtocolError):
    """The bytes end before the structure does (Kafka: ``BufferUnderflowException`` → the connection is closed)."""


class MalformedError(ProtocolError):
    """A length, count or value that cannot be (negative non-null length, invalid UTF-8, bad varint)."""


class FrameTooLargeError(ProtocolError):
    """A size prefix above ``socket.request.max.bytes`` (Kafka: ``InvalidReceiveException``, connection closed)."""


class UnknownApiKeyError(ProtocolError):
    """An api key a Kafka 2.6 broker does not know (Kafka closes the connection)."""


class UnsupportedVersionError(ProtocolError):
    """A version outside the 2.6 range of a known api key. ``header`` is the request's header when it could be read
    (an ApiVersions request of a newer version is answered from it, KIP-511)."""

    error_code = UNSUPPORTED_VERSION

    def __init__(self, message: str, header: object = None) -> None:
        super().__init__(message)
        self.header = header


class CorruptRecordError(ProtocolError):
    """A record batch whose CRC does not match or whose records cannot be read (Kafka: CORRUPT_MESSAGE)."""

    error_code = CORRUPT_MESSAGE


class InvalidRecordError(ProtocolError):
    """A record batch Kafka refuses as a whole: wrong magic, bad sizes (Kafka: INVALID_RECORD)."""

    error_code = INVALID_RECORD


class UnsupportedCompressionError(ProtocolError):
    """A compression codec id Kafka does not know (Kafka: UNSUPPORTED_COMPRESSION_TYPE)."""

    error_code = UNSUPPORTED_COMPRESSION_TYPE


class UnknownFieldError(ValueError):
    """A value to encode names a field the message does not have at that version (a typo would otherwise encode the
    field's default silently). Our own programming error, not bad input from a socket."""


class NullFieldError(ValueError):
    """A value to encode has None in a field Kafka does not allow to be null (Kafka's writer would throw; the bytes
    would be refused by every reader). Our own programming error."""
