"""Run by tests/cluster/test_cluster_groups.py under a given kafka-python (1.4.7 from the venv, or 3.x from
.venv-clients): produce 5 records to partition 0 of TOPIC, read them in group GROUP, commit offset 3, leave; a second
consumer of the group reads the committed offset. Prints JSON {"got": [[partition, offset, value]...],
"committed": n, "version": kafka-python's version}."""

from __future__ import annotations

import json
import sys

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata


def main(bootstrap: str, topic: str, group: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        producer.send(topic, f"v{i}".encode(), partition=0)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=30000)
    got = []
    for m in consumer:
        got.append((m.partition, m.offset, m.value.decode()))
        if len(got) == 5:
            break
    try:
        commit = OffsetAndMetadata(3, "", -1)  # kafka-python 3: offset, metadata, leader epoch
    except TypeError:
        commit = OffsetAndMetadata(3, "")  # kafka-python 1.4
    consumer.commit({TopicPartition(topic, 0): commit})
    consumer.close()
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    committed = reader.committed(TopicPartition(topic, 0))
    reader.close()
    print(json.dumps({"got": got, "committed": committed, "version": kafka.__version__}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
