"""kactor.testing's cluster start imports its readiness checks' clients while ZooKeeper and the brokers start
(issue #41): Kafka's schemas (protocol.framing, behind kactor's wire client) are imported by the time the brokers
could answer, not first imported by the Metadata check after the last broker registered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# a fresh process (this one imported the schemas long ago); the LocalCluster is a stand-in whose start waits, as the
# real one waits for ZooKeeper and spawns brokers, and records whether the schemas arrived meanwhile
SCRIPT = """
import sys, tempfile, time
from kactor.testing import cluster as tc

WANTED = ("protocol.framing", "kactor.cli.kafka_wire", "confluent_kafka.admin")
assert not [m for m in WANTED if m in sys.modules], "imported before the start"
seen = {}

class StandIn:
    def __init__(self, brokers, **kwargs):
        self.n, self.base_dir, self.broker_env = brokers, tempfile.mkdtemp(), {}

    def start(self):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not all(m in sys.modules for m in WANTED):
            time.sleep(0.01)
        seen["during the start"] = sorted(m for m in WANTED if m in sys.modules)

    def stop(self, concurrent=False):
        pass

tc.LocalCluster = StandIn
cluster = tc.KafkaTestCluster(3)
cluster.wait_ready = lambda timeout, starting=False: None
cluster.admin = lambda: type("Admin", (), {"list_topics": lambda self, timeout: None})()
cluster.start()
print(seen["during the start"])
"""


def test_the_wire_schemas_are_imported_while_the_cluster_starts() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted(["confluent_kafka.admin", "kactor.cli.kafka_wire", "protocol.framing"]))
