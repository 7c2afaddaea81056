"""Messages of a broker's dynamic configuration (Kafka's DynamicConfigManager and its config handlers).

The "config-manager" actor follows ``/config/changes``; it tells the replica manager (which tells every shard) when
a topic's overrides or the broker's log defaults change, and tells the controller of its own process when the
broker's log defaults change (the controller's elections read ``unclean.leader.election.enable`` from them, as
Kafka's controller reads its KafkaConfig, dynamic values included). Configs travel as (name, value) pairs of text.
"""

from __future__ import annotations

from messages.registry import message

ConfigPairs = tuple[tuple[str, str], ...]


@message
class ConfigManagerInit:
    """Start the config manager of broker ``broker_id``. ``static_config`` holds the broker's server.properties values
    of the dynamically updatable log configs, by their broker names (e.g. ``min.insync.replicas``)."""

    broker_id: int
    static_config: ConfigPairs = ()


@message
class TopicConfigChanged:
    """TopicConfigHandler.processConfigChanges: ``topic``'s overrides (all of /config/topics/<topic>) are now
    ``config``; the logs of the topic hosted here take them over the current log defaults."""

    topic: str
    config: ConfigPairs


@message
class LogConfigDefaultsChanged:
    """DynamicLogConfig.reconfigure: the broker's log defaults, by topic config names (``min.insync.replicas``,
    ``unclean.leader.election.enable``, ...), static values with the dynamic broker configs applied."""

    config: ConfigPairs
