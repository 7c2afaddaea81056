"""Message traces: one JSON-lines file per process (format: docs/trace-format.md)."""

TRACE_VERSION = 1
