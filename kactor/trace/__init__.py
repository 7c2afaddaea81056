"""Message traces: one JSON-lines file per process (format: docs/trace-format.md; its version is
messages.codec.TRACE_VERSION)."""
