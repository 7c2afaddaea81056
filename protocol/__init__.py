"""Kafka's binary protocol at Kafka 2.6's API versions: framing, headers, every request and response body, record
batches. See docs/wire-protocol.md."""
