"""Kafka's topic-name rules (org.apache.kafka.common.internals.Topic, Kafka 2.6): the one home of the facts both the
admin tools (which raise with Kafka's messages) and the broker's Metadata decision (which answers an error code) use."""

from __future__ import annotations

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"  # Topic.GROUP_METADATA_TOPIC_NAME
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"  # Topic.TRANSACTION_STATE_TOPIC_NAME
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})
MAX_NAME_LENGTH = 249  # Topic.MAX_NAME_LENGTH
LEGAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def contains_valid_pattern(topic: str) -> bool:
    """Topic.containsValidPattern: ASCII alphanumerics, '.', '_' and '-' only."""
    return all(c in LEGAL_CHARS for c in topic)


def is_valid(topic: str) -> bool:
    """Topic.validate's rules: not empty, not "." or "..", at most 249 characters of [a-zA-Z0-9._-]."""
    return bool(topic) and topic not in (".", "..") and len(topic) <= MAX_NAME_LENGTH and contains_valid_pattern(topic)
