"""The configs of client-quota entities, as Kafka 2.6.3's ``DynamicConfig.Client`` and ``DynamicConfig.User``:
their names and types (one home: the quota managers, the admin APIs and the tools read them here) and the
validation AdminZkClient applies before it writes ``/config/clients/<client-id>`` or ``/config/users/...``."""

from __future__ import annotations

import re
from collections.abc import Mapping

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
# QuotaConfigs / DynamicConfig.Client: name -> ConfigDef type
QUOTA_CONFIG_TYPES: dict[str, str] = {PRODUCER_BYTE_RATE: "LONG", CONSUMER_BYTE_RATE: "LONG",
                                      REQUEST_PERCENTAGE: "DOUBLE"}
# DynamicConfig.User: CredentialProvider.userCredentialConfigs (the SCRAM mechanisms) + the quotas
USER_CONFIG_TYPES: dict[str, str] = {"SCRAM-SHA-256": "PASSWORD", "SCRAM-SHA-512": "PASSWORD", **QUOTA_CONFIG_TYPES}

_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


def is_quota_config(name: str) -> bool:
    """QuotaConfigs.isQuotaConfig."""
    return name in QUOTA_CONFIG_TYPES


def validate(config: Mapping[str, str], user: bool) -> None:
    """DynamicConfig.validate (customPropsAllowed = false) of DynamicConfig.User (``user``) or .Client: ValueError
    with Kafka's message for an unknown name (``require``) or a value ConfigDef.parse refuses."""
    types = USER_CONFIG_TYPES if user else QUOTA_CONFIG_TYPES
    unknown = [k for k in config if k not in types]
    if unknown:
        raise ValueError(f"requirement failed: Unknown Dynamic Configuration: Set({', '.join(unknown)}).")
    for key, value in config.items():
        kind = types[key]
        text = str(value).strip()
        if kind == "LONG":
            try:
                ok = LONG_MIN <= int(text) <= LONG_MAX
            except ValueError:
                ok = False
        elif kind == "DOUBLE":
            ok = _JAVA_DOUBLE.fullmatch(text) is not None
        else:
            ok = True
        if not ok:
            raise ValueError(f"Invalid value {value} for configuration {key}: Not a number of type {kind}")
