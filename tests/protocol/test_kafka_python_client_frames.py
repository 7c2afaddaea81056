"""Frames as a real client writes and reads them: kafka-python 1.4.7's ``KafkaProtocol`` (the connection-level
parser its producer, consumer and admin client use) builds request frames that our framing decodes, and reads the
response frames our framing encodes — split into arbitrary chunks, several in flight, correlation ids matched."""

from __future__ import annotations

from kafka.protocol.admin import ApiVersionRequest
from kafka.protocol.fetch import FetchRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.produce import ProduceRequest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from protocol.framing import FrameDecoder, api_versions_body, decode_request, encode_response
from protocol.records import Record, build_batch, check_batch, iter_batches


def _client_batch() -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)  # fmt: skip
    for i in range(5):
        builder.append(i, 1_700_000_000_000 + i, b"k%d" % i, b"value %d" % i * 20, [])
    return bytes(builder.build())


def test_requests_from_kafka_python_are_decoded_and_its_parser_reads_our_responses() -> None:
    client = KafkaProtocol(client_id="kafka-python-1.4.7")
    batch = _client_batch()
    sent = [
        client.send_request(ApiVersionRequest[1]()),
        client.send_request(MetadataRequest[5](topics=["orders"], allow_auto_topic_creation=False)),
        client.send_request(ProduceRequest[5](required_acks=-1, timeout=30000, topics=[("orders", [(0, batch)])])),
        client.send_request(FetchRequest[6](-1, 500, 1, 1 << 20, 0, [("orders", [(0, 5, 0, 1 << 20)])])),
    ]
    wire = client.send_bytes()

    decoder = FrameDecoder()
    requests = [decode_request(p) for i in range(0, len(wire), 7) for p in decoder.feed(wire[i : i + 7])]
    assert [(r.header.request_api_key, r.header.request_api_version, r.header.correlation_id) for r in requests] == [
        (18, 1, sent[0]), (3, 5, sent[1]), (0, 5, sent[2]), (1, 6, sent[3])]  # fmt: skip
    assert {r.header.client_id for r in requests} == {"kafka-python-1.4.7"}
    assert requests[1].body["topics"] == [{"name": "orders"}] and requests[1].body["allow_auto_topic_creation"] is False
    produce = requests[2].body
    assert (produce["acks"], produce["timeout_ms"]) == (-1, 30000)
    records = produce["topic_data"][0]["partition_data"][0]["records"]
    assert records == batch  # stored as received
    (received,) = iter_batches(records)
    check_batch(received)
    assert [r.value for r in received.records()] == [b"value %d" % i * 20 for i in range(5)]
    fetch = requests[3].body
    assert (fetch["max_wait_ms"], fetch["min_bytes"], fetch["isolation_level"]) == (500, 1, 0)
    assert fetch["topics"][0]["partitions"][0]["fetch_offset"] == 5

    ours = build_batch([Record(i, i, None, b"fetched") for i in range(3)], base_offset=5, first_timestamp=1)
    responses = b"".join([
        encode_response(18, 1, sent[0], api_versions_body()),
        encode_response(3, 5, sent[1], {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": 9092, "rack": None}],
                                        "cluster_id": "c1", "controller_id": 1, "topics": [
            {"error_code": 0, "name": "orders", "is_internal": False, "partitions": [
                {"error_code": 0, "partition_index": 0, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1],
                 "offline_replicas": []}]}]}),
        encode_response(0, 5, sent[2], {"responses": [{"name": "orders", "partition_responses": [
            {"index": 0, "error_code": 0, "base_offset": 40, "log_append_time_ms": -1, "log_start_offset": 0}]}]}),
        encode_response(1, 6, sent[3], {"responses": [{"topic": "orders", "partitions": [
            {"partition_index": 0, "error_code": 0, "high_watermark": 8, "last_stable_offset": 8, "log_start_offset": 0,
             "aborted_transactions": [], "records": ours}]}]}),
    ])  # fmt: skip
    got = []
    for i in range(0, len(responses), 5):
        got += client.receive_bytes(responses[i : i + 5])
    assert [cid for cid, _ in got] == sent
    api_versions, metadata, produced, fetched = (r for _, r in got)
    assert (18, 0, 3) in [tuple(k) for k in api_versions.api_versions]
    assert metadata.brokers == [(1, "127.0.0.1", 9092, None)] and metadata.cluster_id == "c1"
    assert metadata.topics[0][1] == "orders" and metadata.topics[0][3][0][4] == [1]
    assert produced.topics == [("orders", [(0, 0, 40, -1, 0)])]
    partition = fetched.topics[0][1][0]
    assert partition[:2] == (0, 0) and partition[2] == 8
    their_batch = DefaultRecordBatch(partition[-1])
    assert their_batch.validate_crc()
    assert [(r.offset, r.value) for r in their_batch] == [(5, b"fetched"), (6, b"fetched"), (7, b"fetched")]
