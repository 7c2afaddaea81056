"""A Quix Streams application, unchanged from how its users write one: exactly-once processing, a stateful count per
key (RocksDB state with its compacted changelog topic), its output to another topic.

Run by tests/cluster/test_cluster_quix_eos.py in a subprocess whose sys.path starts with .venv-clients/quixstreams
(Quix Streams pins a confluent-kafka older than the project's own): ``python quix_eos_app.py BOOTSTRAP GROUP IN OUT
STATE_DIR``. Its transactional id is ``GROUP-txn`` (a user's stable choice, so the test knows its coordinator's
partition); Quix prefixes nothing outside its own cloud. Each input value is ``{"seq": n}``; each output value is
``{"seq": n, "count": c}``, c the number of input records of that key so far.
It runs until killed, as a stream processor does.
"""

from __future__ import annotations

import logging
import sys
from typing import Any


def main(bootstrap: str, group: str, input_topic: str, output_topic: str, state_dir: str) -> None:
    from quixstreams import Application, State

    app = Application(broker_address=bootstrap, consumer_group=group, auto_offset_reset="earliest",
                      processing_guarantee="exactly-once", state_dir=state_dir, commit_interval=0.5,
                      loglevel="INFO", consumer_extra_config={"session.timeout.ms": 10000},
                      producer_extra_config={"transaction.timeout.ms": 20000, "transactional.id": f"{group}-txn"})
    source = app.topic(input_topic, key_deserializer="str", value_deserializer="json")
    sink = app.topic(output_topic, key_serializer="str", value_serializer="json")

    def count(value: dict[str, Any], state: State) -> dict[str, Any]:
        n = state.get("count", 0) + 1
        state.set("count", n)
        return {"seq": value["seq"], "count": n}

    sdf = app.dataframe(source)
    sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(sink)
    app.run()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    main(*sys.argv[1:6])
