"""core/broker/kafka_configs.py: a row's parsed default, kept once parsed, is the one parsed afresh (its value and its
type), asked once or again."""

from __future__ import annotations

from core.broker.kafka_configs import KAFKA_CONFIGS, NO_DEFAULT, parse_type


def test_a_parsed_config_default_is_the_one_parsed_afresh() -> None:
    for row in KAFKA_CONFIGS.values():
        fresh = None if row.default is None or row.default == NO_DEFAULT else parse_type(row.name, row.type,
                                                                                        row.default)
        for _ in range(2):
            value = row.default_value()
            assert value == fresh and type(value) is type(fresh), row.name
