"""``kafka-configs.sh --bootstrap-server``: Kafka 2.6.3's ConfigCommand on the admin API, for topics, brokers (also
the cluster-wide default, ``--entity-default``), users and clients.

Topics and brokers: ``--describe`` sends DescribeConfigs with synonyms and prints the entries whose source is the
entity's dynamic one (all of them with ``--all``) as ``  name=value sensitive=false synonyms={SOURCE:name=value, ...}``;
``--alter`` checks that every ``--delete-config`` key is set, then sends IncrementalAlterConfigs (SET / DELETE). Users
and clients (quotas): DescribeClientQuotas / AlterClientQuotas when the brokers advertise them; otherwise the
UnsupportedVersionException Kafka's client raises, printed as ConfigCommand prints an unexpected error. The requests go
through kactor.cli.kafka_wire: librdkafka's Python binding keeps one synonym per name, where 2.6 lists a name once per
source (a dynamic value and the static one under it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from kactor.admin import configs
from kactor.cli import CliError, kafka_wire
from kactor.cli.java_errors import java_exception_text
from kactor.kafka_clients import KafkaClientError

DESCRIBE_CONFIGS = (32, 2)
INCREMENTAL_ALTER_CONFIGS = (44, 1)
DESCRIBE_CLIENT_QUOTAS = (48, 0)
ALTER_CLIENT_QUOTAS = (49, 0)
TOPIC, BROKER = 2, 4  # ConfigResource.Type
SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}
DEFAULT_BROKER = ""  # ConfigEntityName.Default as the admin API names it
ENTITY_TYPES = ("topics", "clients", "users", "brokers", "broker-loggers")  # BrokerSupportedConfigTypes
QUOTA_CONFIGS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
QUOTA_ENTITY = {"users": "user", "clients": "client-id"}  # ClientQuotaEntity.USER / CLIENT_ID
QUOTA_LABEL = {"user": "user-principal", "client-id": "client-id"}
Out = Callable[[str], None]


class UnexpectedError(Exception):
    """ConfigCommand.main's ``case t: Throwable``: "Error while executing config command with args '...'"."""


def java_double(value: float) -> str:
    """Double.toString: plain decimals in [1e-3, 1e7), otherwise computerized scientific notation (``2.0E7``), both
    with the shortest digits that read back as the same double (Python's repr has the same digits)."""
    value = float(value)
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    if "e" in text:
        mantissa, exponent = text.split("e")
        whole, _, frac = mantissa.partition(".")
        digits, exp = whole + frac, int(exponent) + len(whole) - 1
    else:
        whole, _, frac = text.partition(".")
        if whole != "0":
            digits, exp = whole + frac, len(whole) - 1
        else:
            stripped = frac.lstrip("0")
            digits, exp = stripped, -(len(frac) - len(stripped) + 1)
    digits = digits.lstrip("0").rstrip("0") or "0"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def _check(answer: dict[str, Any], code_key: str = "error_code") -> None:
    code = answer.get(code_key, 0)
    if code:
        raise KafkaClientError(java_exception_text(code, answer.get("error_message")))


def describe_resource(bootstrap: kafka_wire.Bootstrap, rtype: int, name: str, timeout_s: float) -> list[dict[str, Any]]:
    """DescribeConfigs (with synonyms) of one resource; a broker's at that broker."""
    node = int(name) if rtype == BROKER and name != DEFAULT_BROKER else None
    answer = kafka_wire.node_request(bootstrap, node, *DESCRIBE_CONFIGS, {
        "resources": [{"resource_type": rtype, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True}, timeout_s)
    (result,) = answer["results"]
    _check(result)
    return list(result["configs"])


def entry_line(entry: dict[str, Any]) -> str:
    """``  name=value sensitive=false synonyms={SOURCE:name=value, ...}`` (Java prints a null value as null)."""
    def value(v: str | None) -> str:
        return "null" if v is None else v
    synonyms = ", ".join(f"{SOURCES.get(s['source'], 'UNKNOWN')}:{s['name']}={value(s['value'])}"
                         for s in entry.get("synonyms") or ())
    return (f"  {entry['name']}={value(entry['value'])} sensitive={str(bool(entry['is_sensitive'])).lower()} "
            f"synonyms={{{synonyms}}}")


def describe_resources(bootstrap: kafka_wire.Bootstrap, out: Out, entity_type: str, name: str | None,
                       describe_all: bool, timeout_s: float) -> None:
    """ConfigCommand.describeResourceConfig: every topic (or every broker, then the cluster default) without a
    name."""
    if name is None:
        if entity_type == "topics":
            names = kafka_wire.topic_names(bootstrap, timeout_s)
        else:
            meta = kafka_wire.metadata(bootstrap, timeout_s)
            names = [str(b["node_id"]) for b in meta["brokers"]] + [DEFAULT_BROKER]
    else:
        names = [name]
    rtype = TOPIC if entity_type == "topics" else BROKER
    for entity in names:
        if rtype == BROKER and entity == DEFAULT_BROKER:
            out(f"Default configs for {entity_type} in the cluster are:")
            source = 3
        else:
            if rtype == BROKER and not _is_int(entity):
                raise CliError(f"The entity name for {entity_type} must be a valid integer broker id, found: "
                               f"{entity}")
            out(f"{'All' if describe_all else 'Dynamic'} configs for {entity_type[:-1]} {entity} are:")
            source = 1 if rtype == TOPIC else 2
        for entry in describe_resource(bootstrap, rtype, entity, timeout_s):
            if describe_all or entry["config_source"] == source:
                out(entry_line(entry))


def alter_resource(bootstrap: kafka_wire.Bootstrap, out: Out, entity_type: str, name: str, to_add: dict[str, str],
                   to_delete: Sequence[str], timeout_s: float) -> None:
    """ConfigCommand.alterConfig for topics and brokers: a key to delete must be set (Invalid config(s)), then one
    IncrementalAlterConfigs (at the broker for a broker's configs)."""
    rtype = TOPIC if entity_type == "topics" else BROKER
    source = 1 if rtype == TOPIC else 3 if name == DEFAULT_BROKER else 2
    current = {e["name"] for e in describe_resource(bootstrap, rtype, name, timeout_s)
               if e["config_source"] == source}
    invalid = [k for k in to_delete if k not in current]
    if invalid:
        raise CliError(f"Invalid config(s): {','.join(invalid)}")
    ops = [{"name": k, "config_operation": 0, "value": v} for k, v in to_add.items()]
    ops += [{"name": k, "config_operation": 1, "value": None} for k in to_delete]
    node = int(name) if rtype == BROKER and name != DEFAULT_BROKER else None
    answer = kafka_wire.node_request(bootstrap, node, *INCREMENTAL_ALTER_CONFIGS, {
        "resources": [{"resource_type": rtype, "resource_name": name, "configs": ops}], "validate_only": False},
        timeout_s)
    (result,) = answer["responses"]
    _check(result)
    if name:
        out(f"Completed updating config for {entity_type[:-1]} {name}.")
    else:
        out(f"Completed updating default config for {entity_type} in the cluster.")


def _quotas_supported(bootstrap: kafka_wire.Bootstrap, api: int, timeout_s: float) -> None:
    if not kafka_wire.supports(bootstrap, api, timeout_s):
        name = "DESCRIBE_CLIENT_QUOTAS" if api == DESCRIBE_CLIENT_QUOTAS[0] else "ALTER_CLIENT_QUOTAS"
        raise UnexpectedError(f"org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not "
                              f"support {name}")


def _components(entity_types: Sequence[str], names: Sequence[str]) -> list[dict[str, Any]]:
    """getAllClientQuotasConfigs' filter: a name (exact), "" (the default entity), none (any of that type)."""
    out = []
    for i, t in enumerate(entity_types):
        if i >= len(names):
            out.append({"entity_type": QUOTA_ENTITY[t], "match_type": 2, "match": None})
        elif names[i] == "":
            out.append({"entity_type": QUOTA_ENTITY[t], "match_type": 1, "match": None})
        else:
            out.append({"entity_type": QUOTA_ENTITY[t], "match_type": 0, "match": names[i]})
    if len(names) > len(entity_types):
        raise CliError("More entity names specified than entity types")
    return out


def describe_quotas(bootstrap: kafka_wire.Bootstrap, entity_types: Sequence[str], names: Sequence[str],
                    timeout_s: float) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    _quotas_supported(bootstrap, DESCRIBE_CLIENT_QUOTAS[0], timeout_s)
    answer = kafka_wire.node_request(bootstrap, None, *DESCRIBE_CLIENT_QUOTAS, {
        "components": _components(entity_types, names), "strict": True}, timeout_s)
    _check(answer)
    return [({e["entity_type"]: e["entity_name"] for e in entry["entity"]},
             {v["key"]: v["value"] for v in entry["values"]}) for entry in answer.get("entries") or ()]


def quota_lines(entries: list[tuple[dict[str, str | None], dict[str, float]]]) -> list[str]:
    """ConfigCommand.describeClientQuotasConfig."""
    lines = []
    for entity, values in entries:
        parts = []
        for kind in ("user", "client-id"):
            if kind in entity:
                name, label = entity[kind], QUOTA_LABEL[kind]
                parts.append(f"{label} '{name}'" if name is not None else f"the default {label}")
        lines.append(f"Configs for {', '.join(parts)} are "
                     + ", ".join(f"{k}={java_double(v)}" for k, v in values.items()))
    return lines


def alter_quotas(bootstrap: kafka_wire.Bootstrap, out: Out, entity_types: Sequence[str], names: Sequence[str],
                 to_add: dict[str, str], to_delete: Sequence[str], timeout_s: float) -> None:
    """ConfigCommand.alterConfig for users and clients: quota configs only, numbers only, deleted keys set."""
    entity_type = entity_types[0]
    extra = [k for k in to_add if k not in QUOTA_CONFIGS]
    if extra:
        raise CliError(f"Only quota configs can be added for '{entity_type}' using --bootstrap-server. Unexpected "
                       f"config names: Set({', '.join(extra)})")
    extra = [k for k in to_delete if k not in QUOTA_CONFIGS]
    if extra:
        raise CliError(f"Only quota configs can be deleted for '{entity_type}' using --bootstrap-server. Unexpected "
                       f"config names: List({', '.join(extra)})")
    if len(entity_types) != len(names):
        raise CliError("Exactly one entity name must be specified for every entity type")
    current = describe_quotas(bootstrap, entity_types, names, timeout_s)
    old = current[0][1] if current else {}
    invalid = [k for k in to_delete if k not in old]
    if invalid:
        raise CliError(f"Invalid config(s): {','.join(invalid)}")
    ops = []
    for key, value in to_add.items():
        try:
            ops.append({"key": key, "value": float(value), "remove": False})
        except ValueError:
            raise CliError(f"Cannot parse quota configuration value for {key}: {value}") from None
    ops += [{"key": k, "value": 0.0, "remove": True} for k in to_delete]
    _quotas_supported(bootstrap, ALTER_CLIENT_QUOTAS[0], timeout_s)
    entity = [{"entity_type": QUOTA_ENTITY[t], "entity_name": n or None} for t, n in zip(entity_types, names,
                                                                                         strict=True)]
    answer = kafka_wire.node_request(bootstrap, None, *ALTER_CLIENT_QUOTAS, {
        "entries": [{"entity": entity, "ops": ops}], "validate_only": False}, timeout_s)
    for entry in answer.get("entries") or ():
        _check(entry)
    name = names[0]
    if name:
        out(f"Completed updating config for {entity_type[:-1]} {name}.")
    else:
        out(f"Completed updating default config for {entity_type} in the cluster.")


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def run(argv_text: str, bootstrap: kafka_wire.Bootstrap, alter: bool, entity_types: list[str], names: list[str],
        add_config: str | None, delete_config: list[str], describe_all: bool, timeout_s: float = 30.0) -> int:
    """ConfigCommand.processCommand; failures as the tool prints them (stderr, exit 1)."""
    def out(line: str) -> None:
        print(line, flush=True)
    try:
        if alter and len(entity_types) != len(names):
            raise CliError("An entity name must be specified for every entity type")
        to_add = configs.parse_configs_to_be_added(add_config) if alter else {}
        to_delete = configs.parse_configs_to_be_deleted(delete_config) if alter else []
        head = entity_types[0]
        if head in ("users", "clients"):
            if alter:
                alter_quotas(bootstrap, out, entity_types, names, to_add, to_delete, timeout_s)
            else:
                for line in quota_lines(describe_quotas(bootstrap, entity_types, names, timeout_s)):
                    out(line)
        elif head == "broker-loggers":
            raise UnexpectedError("org.apache.kafka.common.errors.InvalidRequestException: kactor's brokers keep no "
                                  "log4j loggers to describe or alter")
        elif alter:
            alter_resource(bootstrap, out, head, names[0], to_add, to_delete, timeout_s)
        else:
            describe_resources(bootstrap, out, head, names[0] if names else None, describe_all, timeout_s)
    except (UnexpectedError, KafkaClientError) as e:
        print(f"Error while executing config command with args '{argv_text}'", file=sys.stderr)
        print(str(e), file=sys.stderr, flush=True)
        return 1
    return 0
