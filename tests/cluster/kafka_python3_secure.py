"""kafka-python 3 over a SASL or SSL listener, run as a subprocess (``PYTHONPATH=.venv-clients/kafka-python3``, as
kafka_python3_client.py is).

``python kafka_python3_secure.py BOOTSTRAP PROTOCOL MECHANISM USER PASSWORD TOPIC COUNT [CAFILE [CERTFILE KEYFILE]]``
(MECHANISM, USER and PASSWORD "-" for SSL without SASL; CAFILE the PEM trust store of an SSL or SASL_SSL listener,
CERTFILE and KEYFILE a client certificate and its unencrypted key) produces COUNT records
"kp3-sasl-<i>" with acks=all, reads the topic's partition 0 from the beginning and prints one JSON document:
{"produced": [offsets], "consumed": [values], "error": null}, or {"error": "<exception type>: <message>"} when the
client fails (a refused authentication: kafka-python logs the broker's message, on stderr here, and reports a
bootstrap failure).
"""

import json
import logging
import sys
import time


def run(bootstrap, protocol, mechanism, user, password, topic, count, cafile=None, certfile=None, keyfile=None):
    import kafka
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    assert kafka.__version__.startswith("3."), kafka.__file__
    sasl = {"security_protocol": protocol}
    if mechanism != "-":
        sasl.update(sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
    if cafile:
        # the brokers' certificates name 127.0.0.1 (an IP SAN): kafka-python checks the host name as Kafka's
        # ssl.endpoint.identification.algorithm=https does
        sasl.update(ssl_cafile=cafile, ssl_check_hostname=True)
    if certfile:
        sasl.update(ssl_certfile=certfile, ssl_keyfile=keyfile)
    try:
        # a refused client waits out bootstrap_timeout_ms (30 s by default) before it reports the failure
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="kp3-sasl",
                                 max_block_ms=15000, bootstrap_timeout_ms=10000, **sasl)
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"error": f"{type(e).__name__}: {e}"}
    futures = [producer.send(topic, value=f"kp3-sasl-{i}".encode(), partition=0) for i in range(int(count))]
    producer.flush(30)
    produced = [f.get(timeout=30).offset for f in futures]
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kp3-sasl", enable_auto_commit=False,
                             group_id=None, **sasl)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    consumed = []
    deadline = time.monotonic() + 30
    while len(consumed) < int(count) and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            consumed.extend(r.value.decode() for r in records)
    consumer.close()
    return {"produced": produced, "consumed": consumed, "error": None}


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.ERROR)
    json.dump(run(*sys.argv[1:]), sys.stdout)
