"""Messages of client quotas: the config manager tells the network edge (through the "net" actor) that a quota
entity's configuration changed, as Kafka's ClientIdConfigHandler / UserConfigHandler tell the quota managers."""

from __future__ import annotations

from messages.registry import message

ConfigPairs = tuple[tuple[str, str], ...]


@message
class ClientQuotaConfigChanged:
    """QuotaConfigHandler.updateQuotaConfig's input: the whole config of one quota entity as its znode holds it.
    ``user`` / ``client_id``: the znode's sanitized names (``<default>`` for a default entity), None when the entity
    has no such part (``/config/clients/<client-id>`` has no user; ``/config/users/<user>`` no client id)."""

    user: str | None
    client_id: str | None
    config: ConfigPairs = ()


@message
class ReplicationQuotasChanged:
    """BrokerConfigHandler.processConfigChanges for this broker's own ``/config/brokers/<id>``: the replication
    quotas (bytes/s; Long.MaxValue when the config is absent) the leader, follower and alter-log-dirs
    ReplicationQuotaManagers of every shard take."""

    leader_bytes_per_second: int
    follower_bytes_per_second: int
    alter_log_dirs_bytes_per_second: int = 2**63 - 1  # Long.MaxValue: replica.alter.log.dirs.io.max.bytes.per.second
