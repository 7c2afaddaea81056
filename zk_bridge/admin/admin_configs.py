"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics and brokers, as Kafka 2.6's
``AdminManager.describeConfigs`` / ``alterConfigs`` / ``incrementalAlterConfigs``: the answers of `AdminManager`.

Topics are served by any broker (their config is /config/topics/<t>); a broker resource names this broker (its
/config/brokers/<id>) or is "" (the cluster default, /config/brokers/<default>). Writes go through
`AdminZkClient.change_topic_config` / ``change_broker_config``: the config znode and its change notification.
"""

from __future__ import annotations

from typing import Any

from core.broker import log_config
from core.broker.log_config import InvalidConfigurationException
from messages.common import Errors
from zk_bridge.admin import UnknownTopicOrPartitionException, topic_name
from zk_bridge.admin.admin_zk import BROKER_CONFIG_TYPE, DEFAULT_ENTITY
from zk_bridge.admin.api_errors import AdminOps, Body, InvalidRequestException, api_error
from zk_bridge.admin.config_entries import broker_config_entries, topic_config_entries
from zk_bridge.admin.dynamic_broker_config import is_password_config, scala_set, validate_configs

# ConfigResource.Type ids
TOPIC = 2
BROKER = 4
RESOURCE_TYPE_NAMES = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "BROKER", 8: "BROKER_LOGGER"}
# AlterConfigOp.OpType ids
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


class ConfigValueError(Exception):
    """ConfigException (a value that does not parse, a config that may not change): 2.6 answers INVALID_REQUEST."""


def resource_text(resource_type: int, name: str) -> str:
    """ConfigResource.toString."""
    return f"ConfigResource(type={RESOURCE_TYPE_NAMES.get(resource_type, 'UNKNOWN')}, name='{name}')"


def broker_id_of(name: str) -> int:
    """AdminManager.resourceNameToBrokerId."""
    try:
        return int(name)
    except ValueError:
        raise InvalidRequestException(f"Broker id must be an integer, but it is: {name}") from None


# -- DescribeConfigs ---------------------------------------------------------------------------------------------------
def describe_configs(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleDescribeConfigsRequest + AdminManager.describeConfigs."""
    include_synonyms = bool(body.get("include_synonyms"))
    results = []
    for r in body.get("resources") or []:
        rtype, name = r["resource_type"], r["resource_name"]
        keys = r.get("configuration_keys")
        result: Body = {"error_code": 0, "error_message": None, "resource_type": rtype, "resource_name": name,
                        "configs": []}
        try:
            if rtype == TOPIC:
                topic_name.validate(name)
                if not m.admin.topic_exists(name):
                    result["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    result["configs"] = topic_config_entries(m.broker_view(), m.admin.fetch_topic_config(name),
                                                             include_synonyms, keys)
            elif rtype == BROKER:
                if name == "":
                    result["configs"] = broker_config_entries(m.broker_view(), False, include_synonyms, keys)
                elif broker_id_of(name) == m.broker_id:
                    result["configs"] = broker_config_entries(m.broker_view(), True, include_synonyms, keys)
                else:
                    raise InvalidRequestException(f"Unexpected broker id, expected {m.broker_id} or empty string, "
                                                  f"but received {name}")
            else:
                raise InvalidRequestException(f"Unsupported resource type: {RESOURCE_TYPE_NAMES.get(rtype, 'UNKNOWN')}")
        except Exception as e:  # noqa: BLE001 - ApiError.fromThrowable, per resource
            error, message = api_error(e)
            result.update(error_code=error, error_message=message, configs=[])
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


# -- AlterConfigs ------------------------------------------------------------------------------------------------------
def alter_configs(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleAlterConfigsRequest + AdminManager.alterConfigs: each resource's config replaced whole."""
    validate_only = bool(body.get("validate_only"))
    responses = []
    for r in body.get("resources") or []:
        rtype, name, entries = r["resource_type"], r["resource_name"], r.get("configs") or []

        def apply(rtype: int = rtype, name: str = name, entries: list[Body] = entries) -> None:
            nulls = [e["name"] for e in entries if e.get("value") is None]
            if nulls:
                raise InvalidRequestException(f"Null value not supported in : {','.join(nulls)}")
            props = {e["name"]: e["value"] for e in entries}
            _alter(m, rtype, name, props, validate_only)

        responses.append(_answer(rtype, name, apply))
    return {"throttle_time_ms": 0, "responses": responses}


def incremental_alter_configs(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleIncrementalAlterConfigsRequest + AdminManager.incrementalAlterConfigs: SET, DELETE, APPEND and
    SUBTRACT applied to the resource's current config (prepareIncrementalConfigs), then written as alterConfigs."""
    validate_only = bool(body.get("validate_only"))
    responses = []
    for r in body.get("resources") or []:
        rtype, name, ops = r["resource_type"], r["resource_name"], r.get("configs") or []

        def apply(rtype: int = rtype, name: str = name, ops: list[Body] = ops) -> None:
            names = [op["name"] for op in ops]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise InvalidRequestException(f"Error due to duplicate config keys : {','.join(duplicates)}")
            unknown_ops = [op["name"] for op in ops if op.get("config_operation") not in OP_NAMES]
            if unknown_ops:
                raise InvalidRequestException(f"Unknown config operation for : {','.join(unknown_ops)}")
            nulls = [f"{OP_NAMES[op['config_operation']]}:{op['name']}" for op in ops
                     if op.get("value") is None and op["config_operation"] != DELETE]
            if nulls:
                raise InvalidRequestException(f"Null value not supported in : {','.join(nulls)}")
            if rtype == TOPIC:
                props = m.admin.fetch_topic_config(name) if topic_name.is_valid(name) else {}
                list_configs = {k for k, (kind, _) in log_config.LOG_CONFIGS.items() if kind == "LIST"}
                known = set(log_config.LOG_CONFIGS)
                defaults = m.broker_view().log_default
            elif rtype == BROKER:
                broker = _broker_of(m, name)
                props = m.admin.fetch_entity_config(BROKER_CONFIG_TYPE,
                                                    DEFAULT_ENTITY if broker is None else str(broker))
                view = m.broker_view()
                list_configs = {k for k, kind in view.types.items() if kind == "LIST"}
                known = set(view.types)
                defaults = view.static_defaults.get
            else:
                raise InvalidRequestException("AlterConfigs is only supported for topics and brokers, but resource "
                                              f"type is {RESOURCE_TYPE_NAMES.get(rtype, 'UNKNOWN')}")
            _prepare_incremental(ops, props, list_configs, known, defaults)
            _alter(m, rtype, name, props, validate_only)

        responses.append(_answer(rtype, name, apply))
    return {"throttle_time_ms": 0, "responses": responses}


def _prepare_incremental(ops: list[Body], props: dict[str, str], list_configs: set[str], known: set[str],
                         default_of: Any) -> None:
    """AdminManager.prepareIncrementalConfigs. APPEND and SUBTRACT only for LIST configs; empty list items are
    dropped (2.6 appends to "" as ",x")."""
    for op in ops:
        name, kind, value = op["name"], op["config_operation"], op.get("value")
        if kind == SET:
            props[name] = value
        elif kind == DELETE:
            props.pop(name, None)
        else:
            if name not in known:
                raise InvalidConfigurationException(f"Unknown topic config name: {name}")
            if name not in list_configs:
                verb = "append" if kind == APPEND else "subtract"
                raise InvalidRequestException(f"Config value {verb} is not allowed for config key: {name}")
            current = props.get(name)
            if kind == APPEND:
                old = (current if current is not None else default_of(name) or "").split(",")
                new = old + value.split(",")
            else:
                old = (current or "").split(",")
                removed = value.split(",")
                new = [v for v in old if v not in removed]
            props[name] = ",".join(v for v in new if v)


def _answer(rtype: int, name: str, apply: Any) -> Body:
    """One resource's answer: NONE, or the error its alteration raised (AdminManager.alterConfigs' catch)."""
    response: Body = {"error_code": 0, "error_message": None, "resource_type": rtype, "resource_name": name}
    try:
        apply()
    except ConfigValueError as e:
        response.update(error_code=Errors.INVALID_REQUEST,
                        error_message=f"Invalid config value for resource {resource_text(rtype, name)}: {e}")
    except Exception as e:  # noqa: BLE001 - ApiError.fromThrowable, per resource
        error, message = api_error(e)
        response.update(error_code=error, error_message=message)
    return response


def _alter(m: AdminOps, rtype: int, name: str, props: dict[str, str], validate_only: bool) -> None:
    if rtype == TOPIC:
        _alter_topic(m, name, props, validate_only)
    elif rtype == BROKER:
        _alter_broker(m, name, props, validate_only)
    else:
        raise InvalidRequestException("AlterConfigs is only supported for topics and brokers, but resource type is "
                                      f"{RESOURCE_TYPE_NAMES.get(rtype, 'UNKNOWN')}")


def _alter_topic(m: AdminOps, topic: str, props: dict[str, str], validate_only: bool) -> None:
    """AdminManager.alterTopicConfigs: the topic must exist; LogConfig.validate (an unknown name is INVALID_CONFIG, a
    bad value a ConfigException); then AdminZkClient.changeTopicConfig."""
    if not topic_name.is_valid(topic) or not m.admin.topic_exists(topic):
        raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
    log_config.validate_names(props)
    try:
        log_config.validate(props)
    except InvalidConfigurationException as e:
        raise ConfigValueError(str(e)) from None
    if not validate_only:
        m.admin.change_topic_config(topic, props)


def _broker_of(m: AdminOps, name: str) -> int | None:
    """AdminManager.getBrokerId: None for "" (the cluster default), else this broker's id."""
    if name == "":
        return None
    broker = broker_id_of(name)
    if broker != m.broker_id:
        raise InvalidRequestException(f"Unexpected broker id, expected {m.broker_id}, but received {name}")
    return broker


def _alter_broker(m: AdminOps, name: str, props: dict[str, str], validate_only: bool) -> None:
    """AdminManager.alterBrokerConfigs: DynamicBrokerConfig.validate, then AdminZkClient.changeBrokerConfig."""
    broker = _broker_of(m, name)
    try:
        validate_configs(props, per_broker_config=broker is not None)
    except InvalidConfigurationException as e:
        raise ConfigValueError(str(e)) from None
    passwords = [k for k in props if is_password_config(k)]
    if passwords:
        raise ConfigValueError(f"kactor does not encrypt password configs: {scala_set(passwords)}")
    if not validate_only:
        m.admin.change_broker_config(broker, props)

