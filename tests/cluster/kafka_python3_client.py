"""A kafka-python 3 client against a kactor cluster, run as a subprocess (``PYTHONPATH=.venv-clients/kafka-python3``:
kafka-utils pins kafka-python 1.x in .venv, so 3.x is never imported by pytest itself).

``python kafka_python3_client.py COMMAND BOOTSTRAP [ARGS...]`` prints one JSON document on stdout:

- ``metadata [TOPIC...]``: {"cluster_id", "controller_id", "brokers": [[id, host, port]], "topics": {name: {partition:
  {"leader", "leader_epoch", "replicas", "isr", "offline", "error"}}}} as its KafkaAdminClient reads Metadata;
- ``create TOPIC PARTITIONS RF`` / ``delete TOPIC``: the admin API's answer ({"error": name or null});
- ``produce TOPIC COUNT``: COUNT records "kp3-<i>" keyed "k<i>" with acks=all (kafka-python 3's defaults otherwise,
  an idempotent producer among them); [[partition, offset, key, value], ...] as acknowledged;
- ``consume TOPIC COUNT``: every partition assigned from the beginning until COUNT records are read (30 s at most);
  [[partition, offset, key, value], ...] in the order read.
"""

import json
import sys
import time


def _check_version():
    import kafka

    assert kafka.__version__.startswith("3."), kafka.__file__


def metadata(bootstrap, *topics):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp3-metadata")
    try:
        cluster = admin.describe_cluster()
        described = admin.describe_topics(list(topics) or None)
    finally:
        admin.close()
    return {
        "cluster_id": cluster.get("cluster_id"),
        "controller_id": cluster["controller_id"],
        "brokers": sorted([b["broker_id"], b["host"], b["port"]] for b in cluster["brokers"]),
        "topics": {t["name"]: {str(p["partition_index"]): {
            "leader": p["leader_id"], "leader_epoch": p["leader_epoch"], "replicas": p["replica_nodes"],
            "isr": p["isr_nodes"], "offline": p["offline_replicas"], "error": p["error_code"]}
            for p in t["partitions"]} for t in described if not t["is_internal"]},
    }


def create(bootstrap, topic, partitions, rf):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp3-admin")
    try:
        admin.create_topics({topic: {"num_partitions": int(partitions), "replication_factor": int(rf)}},
                            timeout_ms=20000)
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"error": type(e).__name__ + ": " + str(e)}
    finally:
        admin.close()
    return {"error": None}


def delete(bootstrap, topic):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp3-admin")
    try:
        admin.delete_topics([topic], timeout_ms=20000)
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__ + ": " + str(e)}
    finally:
        admin.close()
    return {"error": None}


def produce(bootstrap, topic, count):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="kp3-producer")
    futures = [(i, producer.send(topic, key=f"k{i}".encode(), value=f"kp3-{i}".encode()))
               for i in range(int(count))]
    producer.flush(30)
    out = []
    for i, f in futures:
        md = f.get(timeout=30)
        out.append([md.partition, md.offset, f"k{i}", f"kp3-{i}"])
    producer.close()
    return out


def _text(data):
    return None if data is None else data.decode()


def consume(bootstrap, topic, count):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kp3-consumer", enable_auto_commit=False,
                             group_id=None)
    partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    out = []
    deadline = time.monotonic() + 30
    while len(out) < int(count) and time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=500).items():
            out.extend([tp.partition, r.offset, _text(r.key), _text(r.value)] for r in records)
    consumer.close()
    return out


def main():
    _check_version()
    command, bootstrap, *args = sys.argv[1:]
    result = {"metadata": metadata, "create": create, "delete": delete, "produce": produce,
              "consume": consume}[command](bootstrap, *args)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
