"""One kafka-python 3 group member as a subprocess (``PYTHONPATH=.venv-clients/kafka-python3``):
``python kafka_python3_group_member.py BOOTSTRAP GROUP TOPIC SESSION_MS`` subscribes to TOPIC in GROUP and prints its
assignment (a JSON list of partitions) each time it changes, until stdin closes."""

import json
import sys
import threading


def main(bootstrap, group, topic, session_ms):
    import kafka

    assert kafka.__version__.startswith("3."), kafka.__file__
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=f"kp3-{group}",
                                   session_timeout_ms=int(session_ms), heartbeat_interval_ms=1000,
                                   enable_auto_commit=False, auto_offset_reset="earliest",
                                   metadata_max_age_ms=1000)
    consumer.subscribe([topic])
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    held = None
    while not stop.is_set():
        consumer.poll(timeout_ms=100)
        now = sorted(tp.partition for tp in consumer.assignment())
        if now != held:
            held = now
            print(json.dumps(now), flush=True)
    consumer.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
