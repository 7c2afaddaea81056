"""``kactor broker-api-versions``: 2.6.3's ``kafka-broker-api-versions.sh`` (kafka.admin.BrokerApiVersionsCommand).

Each broker of the cluster's metadata is asked ApiVersions and printed as BrokerApiVersionsCommand.execute prints it:
``host:port (id: N rack: R) -> (`` then one line per API key of 2.6.3's client, ``Name(key): min to max [usable: V]``
(NodeApiVersions.toString(true)), ``)``; a broker that does not answer is ``host:port (id: N rack: R) -> ERROR: ...``.
The client side of "usable" is 2.6.3's ApiKeys, which is the table kactor's brokers serve (protocol/api_versions.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kactor.cli import CliError, kafka_wire
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, servers
from kactor.cli.support import printer
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, KafkaClientError
from protocol.api_versions import KAFKA_2_6_API_VERSIONS, ApiRange


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "broker-api-versions",
        description="This tool helps to retrieve broker version information.")
    add_bootstrap_args(p)
    add_client_config_arg(p, "--command-config", "A property file containing configs to be passed to Admin Client.")
    p.set_defaults(func=run, _parser=p)


def node_text(node_id: int, host: str, port: int, rack: str | None) -> str:
    """org.apache.kafka.common.Node.toString."""
    return f"{host}:{port} (id: {node_id} rack: {rack if rack is not None else 'null'})"


def _version_text(key: int, low: int, high: int, client: Mapping[int, ApiRange]) -> str:
    """NodeApiVersions.apiVersionToText."""
    known = client.get(key)
    text = f"{known.name if known else 'UNKNOWN'}({key}): {low if low == high else f'{low} to {high}'}"
    if known is None:
        return text
    if known.max_version < low:
        return text + " [unusable: node too new]"
    if high < known.min_version:
        return text + " [unusable: node too old]"
    return text + f" [usable: {min(known.max_version, high)}]"


def versions_text(api_keys: Iterable[Mapping[str, int]],
                  client: Mapping[int, ApiRange] = KAFKA_2_6_API_VERSIONS) -> str:
    """NodeApiVersions.toString(true): every key the node or the client (2.6.3's tool: 2.6's keys) knows, in key
    order; a key beyond 2.6 is UNKNOWN(<key>)."""
    lines = {k["api_key"]: _version_text(k["api_key"], k["min_version"], k["max_version"], client)
             for k in api_keys}
    for key, known in client.items():
        lines.setdefault(key, f"{known.name}({key}): UNSUPPORTED")
    return "(\n\t" + ",\n\t".join(lines[k] for k in sorted(lines)) + "\n)"


def broker_versions(meta: Mapping[str, Any], ask: Callable[[tuple[str, int]], Mapping[str, Any]],
                    out: Callable[[str], None]) -> None:
    """BrokerApiVersionsCommand.execute over the metadata's brokers (in id order); ``ask`` sends ApiVersions."""
    for b in sorted(meta["brokers"], key=lambda b: b["node_id"]):
        node = node_text(b["node_id"], b["host"], b["port"], b.get("rack"))
        try:
            answer = ask((b["host"], b["port"]))
        except (KafkaClientError, OSError) as e:
            out(f"{node} -> ERROR: {e}")
            continue
        if answer.get("error_code", 0) != 0:
            out(f"{node} -> ERROR: error code {answer['error_code']} in ApiVersions")
            continue
        out(f"{node} -> {versions_text(answer['api_keys'])}")


def run(args: argparse.Namespace) -> int:
    target = servers(args)
    try:
        meta = kafka_wire.metadata(target, DEFAULT_TIMEOUT_S)
        broker_versions(meta, lambda address: kafka_wire.exchange(address, *kafka_wire.API_VERSIONS, {},
                                                                  DEFAULT_TIMEOUT_S, target.props), printer())
    except KafkaClientError as e:
        raise CliError(str(e)) from None
    return 0
