"""``kafka-configs.sh --zookeeper`` (Kafka 2.6's ``kafka.admin.ConfigCommand``, its ZooKeeper path) for topics and
brokers: parse ``--add-config`` / ``--delete-config``, describe and alter ``/config/<type>/<name>``, and write the
change notification every broker's config manager follows.

Kafka keeps a config in a ``java.util.Properties``, whose key order is the JVM's hash order; here keys keep the order
of the znode, new keys last. Readers of the znode parse JSON, so only a byte-for-byte diff sees the difference.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import attrs

from core.broker.log_config import MESSAGE_FORMAT_VERSION, InvalidConfigurationException
from core.quota.client_quota_manager import desanitize
from core.security.scram import preprocess_scram_credentials
from zk_bridge.admin import IllegalArgumentException
from zk_bridge.admin.admin_zk import (
    BROKER_CONFIG_TYPE,
    DEFAULT_ENTITY,
    TOPIC_CONFIG_TYPE,
    USER_CONFIG_TYPE,
    AdminZkClient,
    parse_broker,
)
from zk_bridge.admin.dynamic_broker_config import (
    UPDATABLE_WHILE_BROKER_RUNNING,
    is_password_config,
    scala_set,
    validate_configs,
)

Out = Callable[[str], None]
# what kactor has of ConfigType.all: users for their SCRAM credentials (and quotas), not clients
ENTITY_TYPES = (TOPIC_CONFIG_TYPE, USER_CONFIG_TYPE, BROKER_CONFIG_TYPE)
PASSWORD_ENCODER_PREFIX = "password.encoder."
PASSWORD_ENCODER_SECRET = "password.encoder.secret"
# "Split list by commas, but avoid those in []": a separator is followed by no ']' before the next '[' or the end.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_PAIR_SEP = re.compile("," + _OUTSIDE_BRACKETS)
_KV_SEP = re.compile(r"\s*=\s*" + _OUTSIDE_BRACKETS)
_BROKER_INFO = ("Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are "
                "started to enable encrypted password configs to be stored in ZooKeeper.")


@attrs.frozen
class Entity:
    """ConfigCommand.Entity: an entity type and its (sanitized) name; None names every entity of the type."""

    entity_type: str
    name: str | None

    def __str__(self) -> str:
        type_name = {TOPIC_CONFIG_TYPE: "topic", USER_CONFIG_TYPE: "user-principal"}.get(self.entity_type,
                                                                                        self.entity_type)
        if self.name is None:
            return self.entity_type
        if self.name == DEFAULT_ENTITY:
            return f"default {type_name}"
        return f"{type_name} '{desanitize(self.name) if self.entity_type == USER_CONFIG_TYPE else self.name}'"


def warning_for(props: dict[str, str]) -> str | None:
    """parseConfigsToBeAdded's warning for message.format.version."""
    if MESSAGE_FORMAT_VERSION in props:
        return (f"WARNING: The configuration {MESSAGE_FORMAT_VERSION}={props[MESSAGE_FORMAT_VERSION]} is specified. "
                "This configuration will be ignored if the version is newer than the inter.broker.protocol.version "
                "specified in the broker.")
    return None


def parse_configs_to_be_added(add_config: str | None) -> dict[str, str]:
    """ConfigCommand.parseConfigsToBeAdded: ``k1=v1,k2=[v1,v2],k3=`` → {k1: v1, k2: "v1,v2", k3: ""}. Commas inside
    [] do not separate pairs; every '[' and ']' is then removed from the value; a later key wins."""
    if add_config is None:
        return {}
    pairs = _PAIR_SEP.split(add_config)
    while len(pairs) > 1 and pairs[-1] == "":  # Java's String.split drops trailing empty strings
        pairs.pop()
    split = [_KV_SEP.split(p) for p in pairs]
    if not all(len(kv) == 2 for kv in split):
        raise IllegalArgumentException('requirement failed: Invalid entity config: all configs to be added must be '
                                       'in the format "key=val".')
    return {k.strip(): re.sub(r"\[?\]?", "", v).strip() for k, v in split}


def parse_configs_to_be_deleted(delete_config: Iterable[str]) -> list[str]:
    """ConfigCommand.parseConfigsToBeDeleted: each --delete-config value split at ',' (joptsimple's
    withValuesSeparatedBy), trimmed."""
    return [name.strip() for value in delete_config for name in value.split(",")]


def _check_brokers_not_running(admin: AdminZkClient, entity_name: str, to_add: dict[str, str]) -> None:
    """ConfigCommand.alterConfigWithZk, brokers: configs other than the replication quotas may be written through
    ZooKeeper only while the broker (for <default>: every broker) is down; then preProcessBrokerConfigs."""
    dynamic = [k for k in to_add if k not in UPDATABLE_WHILE_BROKER_RUNNING]
    if not dynamic:
        return
    per_broker = entity_name != DEFAULT_ENTITY
    error = f"--bootstrap-server option must be specified to update broker configs {scala_set(dynamic)}."
    if per_broker:
        broker_id = parse_broker(entity_name)
        if broker_id in admin.get_sorted_broker_list():
            raise IllegalArgumentException(
                f"requirement failed: {error} when broker {entity_name} is running. {_BROKER_INFO}")
    elif admin.get_sorted_broker_list():
        raise IllegalArgumentException(
            f"requirement failed: {error} for default cluster if any broker is running. {_BROKER_INFO}")
    encoder = [k for k in to_add if k.startswith(PASSWORD_ENCODER_PREFIX)]
    secret = PASSWORD_ENCODER_SECRET in to_add
    for k in encoder:
        del to_add[k]
    validate_configs(to_add, per_broker)
    passwords = [k for k in to_add if is_password_config(k)]
    if passwords:
        if not secret:
            raise IllegalArgumentException(
                f"requirement failed: {PASSWORD_ENCODER_SECRET} must be specified to update {scala_set(passwords)}. "
                "Other password encoder configs like cipher algorithm and iterations may also be specified to "
                "override the default encoding parameters. Password encoder configs will not be persisted in "
                "ZooKeeper.")
        raise IllegalArgumentException(f"kactor does not encrypt password configs: {scala_set(passwords)}")


def alter_config(admin: AdminZkClient, out: Out, entity: Entity, add_config: str | None,
                 delete_config: Sequence[str]) -> None:
    """ConfigCommand.alterConfigWithZk: the entity's config with the additions and without the deletions (each
    deletion must name a config the entity has), validated for its type, then written with a change
    notification."""
    assert entity.name is not None
    to_add = parse_configs_to_be_added(add_config)
    warning = warning_for(to_add)
    if warning:
        out(warning)
    to_delete = parse_configs_to_be_deleted(delete_config)
    if entity.entity_type == USER_CONFIG_TYPE:
        try:
            to_add = preprocess_scram_credentials(to_add)
        except ValueError as e:
            raise IllegalArgumentException(str(e)) from None
    if entity.entity_type == BROKER_CONFIG_TYPE and (to_add or to_delete):
        _check_brokers_not_running(admin, entity.name, to_add)
    configs = _fetch(admin, entity.entity_type, entity.name)
    invalid = [k for k in to_delete if k not in configs]
    if invalid:
        raise InvalidConfigurationException(f"Invalid config(s): {','.join(invalid)}")
    configs.update(to_add)
    for k in to_delete:
        configs.pop(k, None)
    admin.change_configs(entity.entity_type, entity.name, configs)
    out(f"Completed updating config for entity: {entity}.")


def describe_config(admin: AdminZkClient, out: Out, entity: Entity) -> None:
    """ConfigCommand.describeConfigWithZk: ``Configs for <entity> are k=v,k=v`` for the entity, or for every entity
    of the type that has a config znode."""
    names = [entity.name] if entity.name is not None else admin.get_all_entities_with_config(entity.entity_type)
    for name in names:
        configs = _fetch(admin, entity.entity_type, name)
        if not configs and entity.name is None and entity.entity_type == USER_CONFIG_TYPE:
            continue  # describing all users leaves out users with only <user, client-id> quotas
        text = ",".join(f"{k}={v}" for k, v in configs.items())
        out(f"Configs for {Entity(entity.entity_type, name)} are {text}")


def _fetch(admin: AdminZkClient, entity_type: str, name: str) -> dict[str, str]:
    """AdminZkClient.fetchEntityConfig; a name that is not one znode (a '/' in it, '.', '..') has no config."""
    if not name or "/" in name or name in (".", ".."):
        return {}
    return admin.fetch_entity_config(entity_type, name)

