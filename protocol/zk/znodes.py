"""Encode / decode every znode payload the controller touches, byte-compatible with Kafka 2.6's ``kafka.zk.ZkData``.

Output is compact JSON (``{"version":1,...}``, no spaces) with keys in the order Kafka's own examples show, so a
diff against a real Kafka cluster's znodes is empty. Data travels as text (``str``), as in messages/zk.py.

Decoders raise `ZnodeDecodeError` (a ValueError) naming the path for malformed JSON or a wrong shape, and tolerate
what Kafka tolerates: missing optional keys, v1 topic assignments, older broker registrations, absent (None) data.
Where Kafka swallows a parse failure (``Json.parseBytes`` → None, e.g. /admin/reassign_partitions "treated as
empty"), the caller catches ZnodeDecodeError and does the same: the decision stays visible in the actor's code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from messages.common import (
    Broker,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from messages.zk import ZStat
from protocol.zk import paths

# SecurityProtocol names a listener may carry without an explicit listener_security_protocol_map entry.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
LOG_DIR_FAILURE_EVENT = 1  # LogDirEventNotificationSequenceZNode.LogDirFailureEvent
BROKER_REGISTRATION_VERSION = 4  # what a 2.6 broker (IBP >= 0.10.0-IV1, < 2.7-IV0) writes
# EndPoint.uriParseExp: LISTENER://host:port, IPv6 hosts in brackets, empty host allowed.
_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$")


class ZnodeDecodeError(ValueError):
    """A znode's content could not be decoded; ``path`` names the znode, ``reason`` says what was wrong."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot decode {path}: {reason}")
        self.path = path
        self.reason = reason


# -- helpers -------------------------------------------------------------------------------------------------------
def _dumps(obj: Any) -> str:
    # Jackson writes compact UTF-8; ensure_ascii=False keeps non-ASCII topic names byte-identical.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _loads(data: str, path: str) -> Any:
    try:
        return json.loads(data)
    except (TypeError, ValueError) as e:
        raise ZnodeDecodeError(path, f"invalid JSON ({e}): {data[:200]!r}") from None


def _object(data: str, path: str) -> dict[str, Any]:
    js = _loads(data, path)
    if not isinstance(js, dict):
        raise ZnodeDecodeError(path, f"expected a JSON object, got {type(js).__name__}")
    return js


def _require(js: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in js:
        raise ZnodeDecodeError(path, f"missing key {key!r}")
    return js[key]


def _int(value: Any, what: str, path: str) -> int:
    # bool is an int in Python but not in Jackson: Kafka's to[Int] rejects true/false.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ZnodeDecodeError(path, f"{what} must be an integer, got {value!r}")
    return value


def _str(value: Any, what: str, path: str) -> str:
    if not isinstance(value, str):
        raise ZnodeDecodeError(path, f"{what} must be a string, got {value!r}")
    return value


def _int_list(value: Any, what: str, path: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ZnodeDecodeError(path, f"{what} must be a list of integers, got {value!r}")
    return tuple(_int(v, what, path) for v in value)


def _partition_key(key: str, path: str) -> int:
    try:
        return int(key)
    except ValueError:
        raise ZnodeDecodeError(path, f"partition key {key!r} is not an integer") from None


# -- /controller -----------------------------------------------------------------------------------------------------
def encode_controller(broker_id: int, timestamp_ms: int) -> str:
    """ControllerZNode.encode: ``{"version":1,"brokerid":N,"timestamp":"ms"}``."""
    return _dumps({"version": 1, "brokerid": broker_id, "timestamp": str(int(timestamp_ms))})


def decode_controller(data: str | None, path: str = paths.ControllerZNode) -> int | None:
    """ControllerZNode.decode: the controller's broker id (only ``brokerid`` is read); None if there is no data."""
    if data is None:
        return None
    return _int(_require(_object(data, path), "brokerid", path), "brokerid", path)


# -- /controller_epoch -----------------------------------------------------------------------------------------------
def encode_controller_epoch(epoch: int) -> str:
    """ControllerEpochZNode.encode: the epoch as decimal text."""
    return str(int(epoch))


def decode_controller_epoch(data: str | None, path: str = paths.ControllerEpochZNode) -> int:
    """ControllerEpochZNode.decode (``new String(bytes).toInt``)."""
    if data is None:
        raise ZnodeDecodeError(path, "no data")
    try:
        return int(data.strip())
    except ValueError:
        raise ZnodeDecodeError(path, f"not a decimal integer: {data[:50]!r}") from None


# -- /brokers/ids/<id> -----------------------------------------------------------------------------------------------
def encode_broker(broker: Broker, *, timestamp_ms: int, jmx_port: int = -1,
                  version: int = BROKER_REGISTRATION_VERSION) -> str:
    """BrokerIdZNode.encode (v4 default, as a 2.6 broker writes; v5 adds ``features``).

    Top-level host/port are the first PLAINTEXT endpoint's (null/-1 if none), kept for old clients.
    Key order follows Kafka's documented example (a Java HashMap's iteration order).
    """
    plaintext = next((ep for ep in broker.endpoints if ep.security_protocol == "PLAINTEXT"), None)
    js: dict[str, Any] = {}
    if version >= 5:
        js["features"] = {}
    if version >= 4:
        js["listener_security_protocol_map"] = {ep.listener_name: ep.security_protocol for ep in broker.endpoints}
    js["endpoints"] = [ep.connection_string for ep in broker.endpoints]
    js["jmx_port"] = jmx_port
    js["port"] = plaintext.port if plaintext else -1
    js["host"] = plaintext.host if plaintext else None
    js["version"] = version
    js["timestamp"] = str(int(timestamp_ms))
    if broker.rack is not None and version >= 3:
        js["rack"] = broker.rack
    return _dumps(js)


def _parse_endpoint(text: Any, protocol_map: Mapping[str, str], path: str) -> EndPoint:
    """EndPoint.createEndPoint: ``LISTENER://host:port``; the protocol comes from the map, else the listener name."""
    m = _ENDPOINT_RE.match(_str(text, "endpoint", path))
    if m is None:
        raise ZnodeDecodeError(path, f"unable to parse endpoint {text!r} (expected LISTENER://host:port)")
    listener = m.group(1).upper()  # ListenerName.normalised
    protocol = protocol_map.get(listener, listener)
    if protocol not in SECURITY_PROTOCOLS:
        raise ZnodeDecodeError(path, f"no security protocol for listener {listener!r}")
    return EndPoint(m.group(2), int(m.group(3)), listener, protocol)


def decode_broker(broker_id: int, data: str | None, epoch: int = -1, path: str | None = None) -> Broker:
    """BrokerIdZNode.decode for v1–v5. ``epoch`` is the znode's czxid (the broker epoch), supplied by the caller."""
    path = path or paths.BrokerIdZNode.path(broker_id)
    if data is None:
        raise ZnodeDecodeError(path, "no data")
    js = _object(data, path)
    version = _int(_require(js, "version", path), "version", path)
    if version < 1:
        raise ZnodeDecodeError(path, f"unsupported version of broker registration: {version}")
    if version == 1:
        host = _str(_require(js, "host", path), "host", path)
        port = _int(_require(js, "port", path), "port", path)
        endpoints: tuple[EndPoint, ...] = (EndPoint(host, port, "PLAINTEXT", "PLAINTEXT"),)
    else:
        raw_map = js.get("listener_security_protocol_map") or {}
        if not isinstance(raw_map, dict):
            raise ZnodeDecodeError(path, "listener_security_protocol_map must be an object")
        protocol_map = {str(k).upper(): _str(v, "security protocol", path).upper() for k, v in raw_map.items()}
        listeners = _require(js, "endpoints", path)
        if not isinstance(listeners, list):
            raise ZnodeDecodeError(path, "endpoints must be a list")
        endpoints = tuple(_parse_endpoint(text, protocol_map, path) for text in listeners)
    rack = js.get("rack")
    if rack is not None:
        rack = _str(rack, "rack", path)
    return Broker(broker_id, endpoints, rack, epoch)


# -- /brokers/topics/<topic> -----------------------------------------------------------------------------------------
def encode_topic_assignment(assignment: Mapping[TopicPartition, ReplicaAssignment]) -> str:
    """TopicZNode.encode (2.6, version 2): both reassignment maps always present, holding only partitions being
    reassigned. Partitions are written in partition order."""
    partitions: dict[str, list[int]] = {}
    adding: dict[str, list[int]] = {}
    removing: dict[str, list[int]] = {}
    for tp in sorted(assignment, key=lambda t: t.partition):
        ra = assignment[tp]
        key = str(tp.partition)
        partitions[key] = list(ra.replicas)
        if ra.adding_replicas:
            adding[key] = list(ra.adding_replicas)
        if ra.removing_replicas:
            removing[key] = list(ra.removing_replicas)
    return _dumps({"version": 2, "partitions": partitions, "adding_replicas": adding, "removing_replicas": removing})


def decode_topic_assignment(topic: str, data: str | None,
                            path: str | None = None) -> dict[TopicPartition, ReplicaAssignment]:
    """TopicZNode.decode: tolerates v1 (no reassignment maps), missing keys and a missing node (empty assignment)."""
    path = path or paths.TopicZNode.path(topic)
    if data is None:
        return {}
    js = _object(data, path)

    def _map(key: str) -> dict[str, Any]:
        value = js.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ZnodeDecodeError(path, f"{key} must be an object")
        return value

    partitions, adding, removing = _map("partitions"), _map("adding_replicas"), _map("removing_replicas")
    result: dict[TopicPartition, ReplicaAssignment] = {}
    for key, replicas in partitions.items():
        tp = TopicPartition(topic, _partition_key(key, path))
        result[tp] = ReplicaAssignment(
            _int_list(replicas, f"replicas of partition {key}", path),
            _int_list(adding.get(key, []), f"adding_replicas of partition {key}", path),
            _int_list(removing.get(key, []), f"removing_replicas of partition {key}", path),
        )
    return result


# -- /brokers/topics/<t>/partitions/<p>/state ------------------------------------------------------------------------
def encode_partition_state(state: LeaderIsrAndControllerEpoch) -> str:
    """TopicPartitionStateZNode.encode, keys in Kafka's example order
    ``{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}``."""
    lai = state.leader_and_isr
    return _dumps({"controller_epoch": state.controller_epoch, "leader": lai.leader, "version": 1,
                   "leader_epoch": lai.leader_epoch, "isr": list(lai.isr)})


def decode_partition_state(data: str | None, stat: ZStat | int, path: str = "partition state") -> (
        LeaderIsrAndControllerEpoch | None):
    """TopicPartitionStateZNode.decode: zk_version is the znode's data version (from ``stat``); None if no data."""
    if data is None:
        return None
    js = _object(data, path)
    version = stat.version if isinstance(stat, ZStat) else int(stat)
    lai = LeaderAndIsr(
        _int(_require(js, "leader", path), "leader", path),
        _int(_require(js, "leader_epoch", path), "leader_epoch", path),
        _int_list(_require(js, "isr", path), "isr", path),
        version,
    )
    return LeaderIsrAndControllerEpoch(lai, _int(_require(js, "controller_epoch", path), "controller_epoch", path))


# -- /admin/reassign_partitions --------------------------------------------------------------------------------------
def encode_reassign_partitions(reassignment: Mapping[TopicPartition, Sequence[int]]) -> str:
    """ReassignPartitionsZNode.encode: ``{"version":1,"partitions":[{"topic","partition","replicas"}]}``."""
    return _dumps({"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
        for tp, replicas in sorted(reassignment.items())]})


def _partition_list(js: Mapping[str, Any], path: str) -> list[dict[str, Any]]:
    items = _require(js, "partitions", path)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ZnodeDecodeError(path, "partitions must be a list of objects")
    return items


def _topic_partition(item: Mapping[str, Any], path: str) -> TopicPartition:
    return TopicPartition(_str(_require(item, "topic", path), "topic", path),
                          _int(_require(item, "partition", path), "partition", path))


def decode_reassign_partitions(data: str | None,
                               path: str = paths.ReassignPartitionsZNode) -> dict[TopicPartition, tuple[int, ...]]:
    """ReassignPartitionsZNode.decode. Kafka treats a failure as an empty reassignment: callers catch the error."""
    if data is None:
        return {}
    items = _partition_list(_object(data, path), path)
    return {_topic_partition(i, path): _int_list(_require(i, "replicas", path), "replicas", path) for i in items}


# -- /admin/preferred_replica_election and /isr_change_notification/isr_change_<seq> ------------------------------
def _encode_partition_set(partitions: Iterable[TopicPartition]) -> str:
    return _dumps({"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition}
                                               for tp in sorted(set(partitions))]})


def _decode_partition_set(data: str | None, path: str) -> set[TopicPartition]:
    if data is None:
        return set()
    return {_topic_partition(i, path) for i in _partition_list(_object(data, path), path)}


def encode_preferred_replica_election(partitions: Iterable[TopicPartition]) -> str:
    """PreferredReplicaElectionZNode.encode: ``{"version":1,"partitions":[{"topic":"foo","partition":0}]}``."""
    return _encode_partition_set(partitions)


def decode_preferred_replica_election(data: str | None,
                                      path: str = paths.PreferredReplicaElectionZNode) -> set[TopicPartition]:
    """PreferredReplicaElectionZNode.decode."""
    return _decode_partition_set(data, path)


def encode_isr_change(partitions: Iterable[TopicPartition]) -> str:
    """IsrChangeNotificationSequenceZNode.encode (IsrChangeNotificationHandler.Version = 1)."""
    return _encode_partition_set(partitions)


def decode_isr_change(data: str | None, path: str = paths.IsrChangeNotificationZNode) -> set[TopicPartition]:
    """IsrChangeNotificationSequenceZNode.decode."""
    return _decode_partition_set(data, path)


# -- /log_dir_event_notification/log_dir_event_<seq> -----------------------------------------------------------------
def encode_log_dir_event(broker_id: int) -> str:
    """LogDirEventNotificationSequenceZNode.encode: ``{"version":1,"broker":3,"event":1}``."""
    return _dumps({"version": 1, "broker": broker_id, "event": LOG_DIR_FAILURE_EVENT})


def decode_log_dir_event(data: str | None, path: str = paths.LogDirEventNotificationZNode) -> int | None:
    """LogDirEventNotificationSequenceZNode.decode: the broker id (None if the node had no data)."""
    if data is None:
        return None
    return _int(_require(_object(data, path), "broker", path), "broker", path)


# -- /config/<type>/<name> and /config/changes/config_change_<seq> -------------------------------------------------
def encode_config_entity(config: Mapping[str, str]) -> str:
    """ConfigEntityZNode.encode: ``{"version":1,"config":{"cleanup.policy":"compact"}}``."""
    return _dumps({"version": 1, "config": {k: str(v) for k, v in config.items()}})


def decode_config_entity(data: str | None, path: str = paths.ConfigZNode) -> dict[str, str]:
    """ConfigEntityZNode.decode: no data, or no ``config`` object, is an empty config (as Kafka). Zero-length data
    is no data: a parent created on the way to a child (``/config/users/<user>`` of a <user, client-id> quota)."""
    if not data:
        return {}
    js = _loads(data, path)
    config = js.get("config") if isinstance(js, dict) else None
    if not isinstance(config, dict):
        return {}
    return {k: _str(v, f"config value of {k}", path) for k, v in config.items()}


def encode_config_change(entity_path: str) -> str:
    """ConfigEntityChangeNotificationSequenceZNode.encode (v2): ``{"version":2,"entity_path":"topics/foo"}``."""
    return _dumps({"version": 2, "entity_path": entity_path})


# ConfigType.all as DynamicConfigManager's handlers in ZooKeeper mode (2.6), and the two types version 1 names.
CONFIG_CHANGE_TYPES = ("topics", "clients", "users", "brokers")
CONFIG_CHANGE_V1_TYPES = ("topics", "clients")


def decode_config_change(data: str | None, path: str = paths.ConfigEntityChangeNotificationZNode,
                         config_types: Sequence[str] = CONFIG_CHANGE_TYPES) -> tuple[str, str] | None:
    """A config change notification as ConfigChangedNotificationHandler.processNotification reads it: (entity type,
    entity name); v1 ``{"entity_type","entity_name"}``, v2 ``{"entity_path":"<type>/<name>"}``. None for data that is
    not JSON (Kafka ignores it: the deprecated TopicConfigManager's format). JSON of the wrong shape raises
    ZnodeDecodeError whose ``reason`` is Kafka's IllegalArgumentException message."""
    if data is None:
        return None
    try:
        js = json.loads(data)
    except ValueError:
        return None
    if not isinstance(js, dict):
        raise ZnodeDecodeError(path, (
            "Config change notification has an unexpected value. The format is:"
            '{"version" : 1, "entity_type":"topics/clients", "entity_name" : "topic_name/client_id"} or '
            '{"version" : 2, "entity_path":"entity_type/entity_name"}. '
            f"Received: {data}"))
    version = js.get("version")
    if version == 1 and not isinstance(version, bool):
        entity_type = js.get("entity_type")
        if entity_type not in CONFIG_CHANGE_V1_TYPES:
            raise ZnodeDecodeError(path, "Version 1 config change notification must have 'entity_type' set to "
                                         f"'clients' or 'topics'. Received: {data}")
        name = js.get("entity_name")
        if not isinstance(name, str):
            raise ZnodeDecodeError(path, "Version 1 config change notification does not specify 'entity_name'. "
                                         f"Received: {data}")
        return entity_type, name
    if version == 2 and not isinstance(version, bool):
        entity_path = js.get("entity_path")
        if not isinstance(entity_path, str):
            raise ZnodeDecodeError(path, "Version 2 config change notification must specify 'entity_path'. "
                                         f"Received: {data}")
        root, sep, name = entity_path.partition("/")
        if not sep or root not in config_types:
            types = ", ".join(f"'{t}'/" for t in config_types)
            raise ZnodeDecodeError(path, "Version 2 config change notification must have 'entity_path' starting "
                                         f"with one of {types}. Received: {data}")
        return root, name
    raise ZnodeDecodeError(path, f"Config change notification has unsupported version '{version}', supported "
                                 "versions are 1 and 2.")


# -- ACLs: /kafka-acl/<Type>/<name>, /kafka-acl-extended/<pattern>/<Type>/<name> and their change notifications ------
ACL_VERSION = 1  # AclEntry.CurrentVersion
ACL_CHANGE_EVENT_VERSION = 1  # ExtendedAclChangeEvent.currentVersion
ACL_RESOURCE_SEPARATOR = ":"  # AclEntry.ResourceSeparator
AclEntryNames = tuple[str, str, str, str]  # (principal, permissionType, operation, host) as the znode spells them


def encode_acls(entries: Iterable[AclEntryNames]) -> str:
    """ResourceZNode.encode (AclEntry.toJsonCompatibleMap): ``{"version":1,"acls":[{"principal":"User:alice",
    "permissionType":"Allow","operation":"Read","host":"*"}]}``, the entries in the order given (Kafka's is a set's:
    insertion order up to four entries, the JVM's hash order beyond)."""
    return _dumps({"version": ACL_VERSION, "acls": [
        {"principal": principal, "permissionType": permission, "operation": operation, "host": host}
        for principal, permission, operation, host in entries]})


def decode_acls(data: str | None, path: str) -> tuple[AclEntryNames, ...]:
    """AclEntry.fromBytes, the JSON part: no data, or data that is not JSON, is no ACL (Kafka's Json.parseBytes
    swallows the failure); another version than 1 or an entry without its four strings raises ZnodeDecodeError."""
    if not data:
        return ()
    try:
        js = json.loads(data)
    except ValueError:
        return ()
    if not isinstance(js, dict):
        raise ZnodeDecodeError(path, f"expected a JSON object: {data[:200]!r}")
    version = js.get("version")
    if version != ACL_VERSION or isinstance(version, bool):
        raise ZnodeDecodeError(path, f"requirement failed: ACL version {version!r} is not {ACL_VERSION}")
    items = js.get("acls")
    if not isinstance(items, list):
        raise ZnodeDecodeError(path, "no 'acls' array")
    out: list[AclEntryNames] = []
    for item in items:
        if not isinstance(item, dict):
            raise ZnodeDecodeError(path, f"an ACL is not a JSON object: {item!r}")
        values = []
        for key in ("principal", "permissionType", "operation", "host"):
            if key not in item:
                raise ZnodeDecodeError(path, f"an ACL has no {key!r}")
            values.append(_str(item[key], key, path))
        out.append((values[0], values[1], values[2], values[3]))
    return tuple(out)


def encode_literal_acl_change(resource_type: str, name: str) -> str:
    """LiteralAclChangeStore.encode: ``<ResourceType constant>:<name>`` (``TOPIC:orders``), as text."""
    return f"{resource_type}{ACL_RESOURCE_SEPARATOR}{name}"


def decode_literal_acl_change(data: str | None, path: str = paths.LiteralAclChangeZNode) -> tuple[str, str]:
    """LiteralAclChangeStore.decode: (resource type, name), split at the first ``:`` (a name may hold more)."""
    text = data or ""
    resource_type, sep, name = text.partition(ACL_RESOURCE_SEPARATOR)
    if not sep:
        raise ZnodeDecodeError(path, f"expected a string in format ResourceType:ResourceName but got {text}")
    return resource_type, name


def encode_extended_acl_change(resource_type: str, name: str, pattern_type: str) -> str:
    """ExtendedAclChangeStore.encode (ExtendedAclChangeEvent's bean properties in declaration order):
    ``{"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"}``."""
    return _dumps({"version": ACL_CHANGE_EVENT_VERSION, "resourceType": resource_type, "name": name,
                   "patternType": pattern_type})


def decode_extended_acl_change(data: str | None, path: str = paths.ExtendedAclChangeZNode) -> tuple[str, str, str]:
    """ExtendedAclChangeStore.decode: (resource type, name, pattern type); a version above 1 is refused."""
    try:
        js = json.loads(data or "")
    except ValueError:
        raise ZnodeDecodeError(path, f"Failed to parse ACL change event: {data!r}") from None
    fields = ("resourceType", "name", "patternType")
    if not isinstance(js, dict) or not all(isinstance(js.get(k), str) for k in fields):
        raise ZnodeDecodeError(path, f"Failed to parse ACL change event: {data!r}")
    version = js.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > ACL_CHANGE_EVENT_VERSION:
        raise ZnodeDecodeError(path, f"Acl change event received for unsupported version: {version}")
    return js["resourceType"], js["name"], js["patternType"]


# -- /cluster/id -----------------------------------------------------------------------------------------------------
def encode_cluster_id(cluster_id: str) -> str:
    """ClusterIdZNode.toJson: ``{"version":"1","id":"..."}`` (version is a string here)."""
    return _dumps({"version": "1", "id": cluster_id})


def decode_cluster_id(data: str | None, path: str = paths.ClusterIdZNode) -> str:
    """ClusterIdZNode.fromJson."""
    if data is None:
        raise ZnodeDecodeError(path, "no data")
    return _str(_require(_object(data, path), "id", path), "id", path)


# -- /latest_producer_id_block ---------------------------------------------------------------------------------------
PRODUCER_ID_BLOCK_SIZE = 1000  # ProducerIdManager.PidBlockSize
PRODUCER_ID_BLOCK_VERSION = 1  # ProducerIdManager.CurrentVersion


def encode_producer_id_block(broker_id: int, block_start: int, block_end: int) -> str:
    """ProducerIdManager.generateProducerIdBlockJson: ``{"version":1,"broker":0,"block_start":"0",
    "block_end":"999"}`` (both ends inclusive, written as strings)."""
    return _dumps({"version": PRODUCER_ID_BLOCK_VERSION, "broker": broker_id, "block_start": str(int(block_start)),
                   "block_end": str(int(block_end))})


def decode_producer_id_block(data: str | None,
                             path: str = paths.ProducerIdBlockZNode) -> tuple[int, int, int] | None:
    """ProducerIdManager.parseProducerIdBlockData: (broker, block_start, block_end). None when the node has no data
    yet (createTopLevelPaths creates it empty: the first block is then 0-999)."""
    if not data:
        return None
    js = _object(data, path)
    broker = _int(_require(js, "broker", path), "broker", path)
    ends = []
    for key in ("block_start", "block_end"):
        text = _str(_require(js, key, path), key, path)
        try:
            ends.append(int(text))
        except ValueError:
            raise ZnodeDecodeError(path, f"{key} is not a decimal integer: {text!r}") from None
    return broker, ends[0], ends[1]
