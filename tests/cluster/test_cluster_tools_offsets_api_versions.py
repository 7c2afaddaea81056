"""``kactor broker-api-versions`` and ``kactor get-offsets`` (2.6.3's BrokerApiVersionsCommand and GetOffsetShell)
against a real broker: the broker's ApiVersions as 2.6.3 prints it, and the log start, log end and by-time offsets
of records the console producer wrote (under kafka-console-producer's option names)."""

from __future__ import annotations

import time

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import bootstrap

from protocol.api_versions import KAFKA_2_6_API_VERSIONS

pytestmark = [pytest.mark.cluster]
pytest.importorskip("confluent_kafka")


def test_broker_api_versions_and_get_offsets_on_one_broker(start_cluster) -> None:
    c: Cluster = start_cluster(1)
    (broker,) = c.live_brokers()
    host, port = c.lc.broker_address(broker)
    out = run_kactor("broker-api-versions", "--bootstrap-server", bootstrap(c)).stdout
    lines = out.splitlines()
    assert lines[0] == f"{host}:{port} (id: {broker} rack: null) -> ("
    assert lines[1] == "\tProduce(0): 0 to 8 [usable: 8],"
    # the last of 2.6.3's keys ends the list: KIP-664's keys are served but not advertised (issue #40)
    assert lines[-2] == "\tAlterClientQuotas(49): 0 [usable: 0]"
    assert lines[-1] == ")"
    assert len(lines) == len(KAFKA_2_6_API_VERSIONS) + 2

    c.create_topic("offsets", partitions=2, replication_factor=1)
    before = int(time.time() * 1000)
    # kafka-console-producer's own option names: --broker-list, --request-required-acks, --sync, --timeout
    run_kactor("produce", "--broker-list", bootstrap(c), "--topic", "offsets", "--partition", "1", "--count", "3",
               "--request-required-acks", "all", "--sync", "--timeout", "0")
    shell = ("get-offsets", "--broker-list", bootstrap(c), "--topic", "offsets")
    assert run_kactor(*shell).stdout == "offsets:0:0\noffsets:1:3\n"
    assert run_kactor(*shell, "--time", "-2", "--partitions", "1").stdout == "offsets:1:0\n"
    assert run_kactor(*shell, "--time", str(before - 60_000)).stdout == "offsets:0:\noffsets:1:0\n"
    assert run_kactor(*shell, "--time", str(int(time.time() * 1000) + 3_600_000)).stdout == "offsets:0:\noffsets:1:\n"
    # kafka-console-consumer --whitelist: a pattern subscription, as a member of a group of its own
    read = run_kactor("consume", "--bootstrap-server", bootstrap(c), "--whitelist", "off.*", "--from-beginning",
                      "--max-messages", "3", "--timeout-ms", "30000")
    assert (read.stdout, read.stderr) == ("record-0\nrecord-1\nrecord-2\n", "Processed a total of 3 messages\n")
    missing = run_kactor("get-offsets", "--broker-list", bootstrap(c), "--topic", "nope", check=False)
    assert (missing.returncode, missing.stderr) == (1, "kactor get-offsets: Topic nope does not exist\n")
