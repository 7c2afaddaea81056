"""kafka-python 3's transactions against a kactor cluster, run as a subprocess
(``PYTHONPATH=.venv-clients/kafka-python3``, as kafka_python3_client.py: kafka-python 1.x is what .venv has).

``python kafka_python3_txn_client.py COMMAND BOOTSTRAP [ARGS...]`` prints one JSON document on stdout:

- ``transactions TOPIC TXN_ID PARTITIONS``: one transactional producer commits "kc0-<p>" / "kc1-<p>" to every
  partition, aborts "ka-<p>", then commits "kc2-<p>"; {"error": null} or the exception that ended it;
- ``fence TOPIC TXN_ID``: a producer sends "zombie-0" in a transaction; a second one with the same id initialises
  (fencing the first), commits "fencer-0"; the first then sends "zombie-1" and commits: {"send": the exception
  class and message its send raised, or null, "commit": the same of its commit};
- ``open TOPIC TXN_ID TIMEOUT_MS``: a producer (transaction_timeout_ms TIMEOUT_MS) sends "open-0", "open-1" to
  partition 0 in a transaction, prints {"ready": true} once both are acknowledged, then waits for its SIGKILL;
- ``commit-crash TOPIC TXN_ID PARTITIONS TIMEOUT_MS WAIT_S``: a producer (transaction_timeout_ms TIMEOUT_MS) sends
  "kx-<p>-<i>" (i < 20) to every partition in a transaction, prints {"ready": true} once all are acknowledged, reads
  one line from stdin (the test kills the coordinator's broker after writing it), then commits; prints
  {"commit": null} when commit_transaction() returns, the exception it raised, or "no answer in WAIT_S s" (3.0.12's
  sender can drop the EndTxn for ever: test_cluster_transactions_clients.py says how), and exits;
- ``consume TOPIC ISOLATION PARTITIONS COUNT``: every partition assigned from offset 0 at isolation level
  ISOLATION until COUNT records are read and every partition's position is at its end at that isolation (ListOffsets
  at ISOLATION once COUNT arrived: the high watermark, or the last stable offset for read_committed; past it nothing
  is returned until the log or the transactions' state changes), 60 s at most; {partition: [values in offset order]}.
"""

import json
import sys
import time


def _check_version():
    import kafka

    assert kafka.__version__.startswith("3."), kafka.__file__


def _producer(bootstrap, txn_id, **extra):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, client_id="kp3-txn",
                             max_block_ms=60000, **extra)
    producer.init_transactions()
    return producer


def _send_all(producer, topic, values):
    futures = [producer.send(topic, value=v.encode(), partition=p) for p, v in values]
    producer.flush(30)
    for f in futures:
        f.get(timeout=30)


def transactions(bootstrap, topic, txn_id, partitions):
    partitions = range(int(partitions))
    producer = _producer(bootstrap, txn_id)
    try:
        for kind, commit in (("kc0", True), ("kc1", True), ("ka", False), ("kc2", True)):
            producer.begin_transaction()
            _send_all(producer, topic, [(p, f"{kind}-{p}") for p in partitions])
            if commit:
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"error": type(e).__name__ + ": " + str(e)}
    finally:
        producer.close(5)
    return {"error": None}


def fence(bootstrap, topic, txn_id):
    zombie = _producer(bootstrap, txn_id)
    zombie.begin_transaction()
    _send_all(zombie, topic, [(0, "zombie-0")])
    fencer = _producer(bootstrap, txn_id)
    fencer.begin_transaction()
    _send_all(fencer, topic, [(0, "fencer-0")])
    fencer.commit_transaction()
    errors = {}
    for step, action in (("send", lambda: _send_all(zombie, topic, [(0, "zombie-1")])),
                         ("commit", zombie.commit_transaction)):
        try:
            action()
            errors[step] = None
        except Exception as e:  # noqa: BLE001 - what the zombie is told is the result
            errors[step] = f"{type(e).__name__}: {e}"
    zombie.close(0)
    fencer.close(5)
    return errors


def open_transaction(bootstrap, topic, txn_id, timeout_ms):
    producer = _producer(bootstrap, txn_id, transaction_timeout_ms=int(timeout_ms))
    producer.begin_transaction()
    _send_all(producer, topic, [(0, "open-0"), (0, "open-1")])
    print(json.dumps({"ready": True}), flush=True)
    while True:  # until the test SIGKILLs this process
        time.sleep(1)


def commit_crash(bootstrap, topic, txn_id, partitions, timeout_ms, wait_s):
    import os
    import threading

    producer = _producer(bootstrap, txn_id, transaction_timeout_ms=int(timeout_ms))
    producer.begin_transaction()
    _send_all(producer, topic, [(p, f"kx-{p}-{i}") for p in range(int(partitions)) for i in range(20)])
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()
    outcome = []

    def commit():
        try:
            producer.commit_transaction()
            outcome.append(None)
        except Exception as e:  # noqa: BLE001 - reported to the test
            outcome.append(f"{type(e).__name__}: {e}")

    committing = threading.Thread(target=commit, daemon=True)
    committing.start()
    committing.join(float(wait_s))
    print(json.dumps({"commit": outcome[0] if outcome else f"no answer in {wait_s} s"}), flush=True)
    os._exit(0)  # a producer whose commit never returned cannot be closed


def consume(bootstrap, topic, isolation, partitions, count):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kp3-txn-consumer", enable_auto_commit=False,
                             group_id=None, isolation_level=isolation, auto_offset_reset="earliest")
    tps = [TopicPartition(topic, p) for p in range(int(partitions))]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    out = {str(p): [] for p in range(int(partitions))}
    deadline = time.monotonic() + 60
    ends = None
    while time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=300).items():
            out[str(tp.partition)].extend(r.value.decode() for r in records)
        if ends is None and sum(map(len, out.values())) >= int(count):
            ends = consumer.end_offsets(tps)  # at the consumer's isolation level
        if ends is not None and all(consumer.position(tp) >= ends[tp] for tp in tps):
            break
    consumer.close()
    return out


def main():
    _check_version()
    command, bootstrap, *args = sys.argv[1:]
    result = {"transactions": transactions, "fence": fence, "open": open_transaction,
              "commit-crash": commit_crash, "consume": consume}[command](bootstrap, *args)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
