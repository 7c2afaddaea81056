"""``kactor broker-api-versions`` prints each broker as 2.6.3's BrokerApiVersionsCommand does (Node.toString, then
NodeApiVersions.toString(true) against 2.6.3's client ApiKeys), from a faked Metadata and ApiVersions answer."""

from __future__ import annotations

from kactor.cli.cmd_broker_api_versions import broker_versions, versions_text
from kactor.kafka_clients import KafkaClientError
from protocol.api_versions import API_VERSIONS


def _keys(ranges: dict[int, tuple[int, int]]) -> list[dict[str, int]]:
    return [{"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in ranges.items()]


def test_a_2_6_3_broker_prints_every_key_usable_at_its_latest() -> None:
    served = {k: (r.min_version, r.max_version) for k, r in API_VERSIONS.items() if k < 50}  # 2.6.3's 50 keys
    text = versions_text(_keys(served))
    lines = text.split("\n")
    assert lines[0] == "("
    assert lines[1] == "\tProduce(0): 0 to 8 [usable: 8],"
    assert lines[2] == "\tFetch(1): 0 to 11 [usable: 11],"
    assert "\tWriteTxnMarkers(27): 0 [usable: 0]," in lines
    assert lines[-2] == "\tAlterClientQuotas(49): 0 [usable: 0]"
    assert lines[-1] == ")"
    assert len(lines) == 52  # ( , 50 keys, )


def test_unsupported_unknown_and_unusable_keys_as_node_api_versions_says() -> None:
    text = versions_text(_keys({0: (9, 10), 1: (0, 11), 3: (0, 0), 57: (0, 1)}))
    assert "\tProduce(0): 9 to 10 [unusable: node too new]," in text
    assert "\tListOffsets(2): UNSUPPORTED," in text
    assert "\tMetadata(3): 0 [usable: 0]," in text
    assert text.endswith("\tUNKNOWN(57): 0 to 1\n)")
    old = versions_text(_keys({0: (0, 2)}), {0: API_VERSIONS[0]._replace(min_version=3)})
    assert old == "(\n\tProduce(0): 0 to 2 [unusable: node too old]\n)"


def test_each_broker_in_id_order_and_a_silent_one_as_an_error() -> None:
    meta = {"brokers": [{"node_id": 2, "host": "127.0.0.1", "port": 9093, "rack": None},
                        {"node_id": 1, "host": "127.0.0.1", "port": 9092, "rack": "r1"}]}

    def ask(address: tuple[str, int]) -> dict[str, object]:
        if address[1] == 9093:
            raise KafkaClientError("cannot connect to 127.0.0.1:9093: Connection refused")
        return {"error_code": 0, "api_keys": _keys({0: (0, 8)})}

    out: list[str] = []
    broker_versions(meta, ask, out.append)
    assert out[0].startswith("127.0.0.1:9092 (id: 1 rack: r1) -> (\n\tProduce(0): 0 to 8 [usable: 8],\n\t"
                             "Fetch(1): UNSUPPORTED,")
    assert out[1] == "127.0.0.1:9093 (id: 2 rack: null) -> ERROR: cannot connect to 127.0.0.1:9093: Connection refused"
