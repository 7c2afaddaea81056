"""OffsetDelete (key 47, KIP-496) on a real cluster through kafka-python 3's admin client (delete_group_offsets):
advertised by ApiVersions, answered by the group's coordinator as 2.6.3's GroupCoordinator.handleDeleteOffsets; the
offsets deleted are gone for a consumer of the group, the subscribed topic's kept (GROUP_SUBSCRIBED_TO_TOPIC), a
group that does not exist is GROUP_ID_NOT_FOUND."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_helpers import raw_request
from kafka_clients_helpers import KAFKA_PYTHON3, bootstrap

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_kafka_python3_deletes_a_groups_offsets(start_cluster):
    if not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.fail(f"kafka-python 3 is not installed in {KAFKA_PYTHON3}: run scripts/setup")
    c = start_cluster(3, overrides=("offsets.topic.num.partitions=3", "group.initial.rebalance.delay.ms=0"))
    c.create_topic("t", partitions=2, replication_factor=3)
    c.create_topic("u", partitions=1, replication_factor=3)
    # every broker's metadata must list both topics with their leaders before the consumers start: a kafka-python
    # consumer that learns "t" without its partitions joins with an empty assignment and looks again only after
    # metadata.max.age.ms (5 minutes; seen on a loaded machine as "the member never got t-0 and t-1")
    want = {"t": 2, "u": 1}

    def every_broker_knows() -> bool:
        for address in bootstrap(c).split(","):
            meta = raw_request(address, 3, 1, {"topics": [{"name": t} for t in want]})
            led = {t["name"]: sum(1 for p in t["partitions"] if p["leader_id"] >= 0 and p["error_code"] == 0)
                   for t in meta["topics"] if t["error_code"] == 0}
            if led != want:
                return False
        return True

    c.wait(every_broker_knows, 60, "every broker's metadata for t and u")
    script = Path(__file__).parent / "kafka_python3_offset_delete.py"
    proc = subprocess.run([sys.executable, str(script), bootstrap(c)], capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3)))
    assert proc.returncode == 0, proc.stderr[-8000:]
    out = json.loads(proc.stdout)
    assert out["empty"] == {"deleted": {"t-0": "NoError"}, "committed": {"t-0": None, "t-1": 6}}
    assert out["subscribed"] == {"deleted": {"t-0": "GroupSubscribedToTopicError", "u-0": "NoError"},
                                 "committed": {"t-0": 7, "u-0": None}}
    assert out["missing"] == "GroupIdNotFoundError"
