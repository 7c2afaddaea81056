"""Topic name rules, as ``org.apache.kafka.common.internals.Topic`` (Kafka 2.6)."""

from __future__ import annotations

from messages.topic import (  # noqa: F401 - re-exported: the admin tools' names for them
    GROUP_METADATA_TOPIC_NAME,
    INTERNAL_TOPICS,
    MAX_NAME_LENGTH,
    TRANSACTION_STATE_TOPIC_NAME,
    contains_valid_pattern,
)
from zk_bridge.admin import InvalidTopicException

# TopicCommand.createTopic prints this for a name with '.' or '_'.
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")

def validate(topic: str) -> None:
    """Topic.validate: raise InvalidTopicException with Kafka 2.6's message for an illegal name."""
    if not topic:
        raise InvalidTopicException("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidTopicException('Topic name cannot be "." or ".."')
    if len(topic) > MAX_NAME_LENGTH:
        raise InvalidTopicException(f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                                    f"topic name: {topic}")
    if not contains_valid_pattern(topic):
        raise InvalidTopicException(f'Topic name "{topic}" is illegal, it contains a character other than '
                                    "ASCII alphanumerics, '.', '_' and '-'")


def is_valid(topic: str) -> bool:
    """True if `validate` would accept the name."""
    try:
        validate(topic)
    except InvalidTopicException:
        return False
    return True


def is_internal(topic: str) -> bool:
    """Topic.isInternal."""
    return topic in INTERNAL_TOPICS


def has_collision_chars(topic: str) -> bool:
    """Topic.hasCollisionChars: '.' and '_' collide in metric names."""
    return "_" in topic or "." in topic


def unify_collision_chars(topic: str) -> str:
    """Topic.unifyCollisionChars."""
    return topic.replace(".", "_")


def has_collision(topic_a: str, topic_b: str) -> bool:
    """Topic.hasCollision: the two names are equal once '.' and '_' are unified."""
    return unify_collision_chars(topic_a) == unify_collision_chars(topic_b)
