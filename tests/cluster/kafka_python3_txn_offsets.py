"""kafka-python 3's consume-transform-produce (KafkaProducer.send_offsets_to_transaction: AddOffsetsToTxn, then
TxnOffsetCommit) against a kactor cluster, as a subprocess (``PYTHONPATH=.venv-clients/kafka-python3``):
``python kafka_python3_txn_offsets.py BOOTSTRAP GROUP IN OUT`` reads IN-0 from its start in group GROUP
(read_committed, offsets never committed by the consumer itself), and in each of two transactions writes the records
it read upper-cased to OUT-0 and sends its position to the transaction: 4 records then committed, 3 records then
aborted. It prints one JSON document:

- "pending": the group's committed offset of IN-0 (null: none) just before the first commit, as another consumer
  (not a member) reads it;
- "committed": the same once the first transaction committed (polled until it is 4, 60 s at most);
- "pending_abort": the same just before the abort.
"""

import json
import sys
import time


def main(bootstrap, group, topic_in, topic_out):
    import logging

    import kafka
    from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition

    assert kafka.__version__.startswith("3."), kafka.__file__
    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("kafka.producer").setLevel(logging.INFO)
    tp = TopicPartition(topic_in, 0)
    checker = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                            client_id="kp3-ctp-checker")
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             isolation_level="read_committed", client_id="kp3-ctp-consumer")
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{group}-tx", client_id="kp3-ctp")
    out = {}
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        producer.init_transactions()

        def transform(n):
            producer.begin_transaction()
            read = []
            deadline = time.monotonic() + 60
            while len(read) < n and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=500, max_records=n - len(read)).values():
                    read.extend(records)
            assert len(read) == n, f"read {len(read)} of {n} records"
            for r in read:
                producer.send(topic_out, value=r.value.upper(), partition=0)
            producer.send_offsets_to_transaction({tp: OffsetAndMetadata(consumer.position(tp), "", -1)},
                                                 consumer.group_metadata())

        transform(4)
        out["pending"] = checker.committed(tp)
        producer.commit_transaction()
        deadline = time.monotonic() + 60
        while (committed := checker.committed(tp)) != 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        out["committed"] = committed
        transform(3)
        out["pending_abort"] = checker.committed(tp)
        producer.abort_transaction()
    finally:
        producer.close()
        consumer.close(autocommit=False)
        checker.close(autocommit=False)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
