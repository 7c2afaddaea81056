"""kafka-python 3's KafkaAdminClient.delete_group_offsets (OffsetDelete, key 47) against a kactor cluster, as a
subprocess (``PYTHONPATH=.venv-clients/kafka-python3``): ``python kafka_python3_offset_delete.py BOOTSTRAP`` prints one
JSON document:

- "empty": a group that only stores offsets (t-0, t-1 committed) deletes t-0: the answer per partition, then what
  the group still has committed;
- "subscribed": a group whose consumer subscribes to t (Stable, holding t-0 and t-1) with offsets on t-0 and u-0
  deletes both: t-0 is GROUP_SUBSCRIBED_TO_TOPIC, u-0 goes; then what the group still has committed;
- "missing": a group that does not exist: the error the admin client raises.
"""

import json
import sys
import time


def committed(bootstrap, group, tps):
    from kafka import KafkaConsumer

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {f"{tp.topic}-{tp.partition}": c.committed(tp) for tp in tps}
    finally:
        c.close(autocommit=False)


def answer(result):
    return {f"{tp.topic}-{tp.partition}": error.__name__ for tp, error in sorted(result.items())}


def main(bootstrap):
    import logging

    import kafka
    from kafka import KafkaAdminClient, KafkaConsumer, OffsetAndMetadata, TopicPartition

    assert kafka.__version__.startswith("3."), kafka.__file__
    # the coordinator's own log (joins, syncs, errors) on stderr, which the test shows on failure
    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("kafka.coordinator").setLevel(logging.INFO)
    t0, t1, u0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp3-offset-delete")
    out = {}
    try:
        storer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="od-empty", enable_auto_commit=False)
        storer.commit({t0: OffsetAndMetadata(5, "", -1), t1: OffsetAndMetadata(6, "", -1)})
        storer.close(autocommit=False)
        out["empty"] = {"deleted": answer(admin.delete_group_offsets("od-empty", [t0])),
                        "committed": committed(bootstrap, "od-empty", [t0, t1])}

        # kafka-python 3.0.12 can end a rejoin believing itself joined (need_rejoin False, its assignment snapshot
        # {'t': {0, 1}}) with no partition assigned and no heartbeat sent, polling in a busy loop while the
        # coordinator expires it (CI, 2026-11-26): a member not assigned within 30 s is replaced, as an application
        # restarting its consumer would
        member = None
        for _attempt in range(4):
            member = KafkaConsumer(bootstrap_servers=bootstrap, group_id="od-subscribed", enable_auto_commit=False,
                                   session_timeout_ms=10000, heartbeat_interval_ms=1000)
            member.subscribe(["t"])
            deadline = time.monotonic() + 30
            while len(member.assignment()) < 2 and time.monotonic() < deadline:
                member.poll(timeout_ms=200)
            if len(member.assignment()) == 2:
                break
            coordinator = member._coordinator
            print(f"the member got {member.assignment()} in 30 s: state {coordinator.state}, generation "
                  f"{coordinator._generation}, its metadata of t {member._client.cluster.partitions_for_topic('t')}",
                  file=sys.stderr)
            member.close(autocommit=False)
        assert member is not None and len(member.assignment()) == 2, "the member never got t-0 and t-1"
        member.commit({t0: OffsetAndMetadata(7, "", -1), u0: OffsetAndMetadata(8, "", -1)})
        out["subscribed"] = {"deleted": answer(admin.delete_group_offsets("od-subscribed", [t0, u0]))}
        member.close(autocommit=False)
        out["subscribed"]["committed"] = committed(bootstrap, "od-subscribed", [t0, u0])

        try:
            admin.delete_group_offsets("od-missing", [t0])
            out["missing"] = None
        except kafka.errors.KafkaError as e:
            out["missing"] = type(e).__name__
    finally:
        admin.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
