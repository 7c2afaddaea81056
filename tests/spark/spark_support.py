"""A small handcrafted trace (real message objects encoded by messages.codec, as the trace writer does) and its exact
expectations."""

from __future__ import annotations

import json
import os

from messages.codec import TRACE_VERSION, encode_record
from messages.common import Errors, TopicPartition
from messages.observability import (
    ChannelRequestCompleted,
    ControllerChanged,
    ControllerEventProcessed,
    ControllerGauges,
    LeaderElection,
    PartitionStateChange,
    ReassignmentProgress,
    ReplicaStateChange,
    StateChangeBatch,
    TopicDeletionProgress,
)
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrResponse, PartitionError
from messages.runtime import TimerFired
from messages.zk import ZkWatchEvent

T0 = 1_767_225_600_000.0  # 2026-01-01T00:00:00Z, in ms
T0_2 = TopicPartition("orders", 0)
T1 = TopicPartition("orders", 1)
PAYMENTS_2 = TopicPartition("payments", 2)


def header(process: str, broker_id: int, version: int = TRACE_VERSION) -> str:
    return json.dumps({"trace_version": version, "process": process, "started_ms": T0, "broker_id": broker_id,
                       "config": {}, "kactor": "0.1.0"}, separators=(",", ":"))


def lair_request() -> LeaderAndIsrRequest:
    state = LeaderAndIsrPartitionState(T0_2, 1, 0, 1, (0,), 1, (0, 1))
    return LeaderAndIsrRequest(0, 1, 4096, (state,), ())


# (ts offset ms, sender, receiver, message, cause) in seq order, per process
BROKER_0 = [
    (0.0, "edge:zk", "controller", ZkWatchEvent("/controller", "DELETED"), None),
    (1.0, "controller", "metrics", ControllerChanged(0, 1, True), 1),
    (1000.0, "edge:zk", "controller", ZkWatchEvent("/brokers/ids", "CHILD"), None),
    (1005.0, "controller", "state-change-log", StateChangeBatch(
        1,
        (PartitionStateChange(T0_2, "OnlinePartition", "OfflinePartition"),
         PartitionStateChange(T0_2, "OfflinePartition", "OnlinePartition"),
         PartitionStateChange(T1, "OnlinePartition", "OfflinePartition")),
        (ReplicaStateChange(T0_2, 1, "OnlineReplica", "OfflineReplica"),
         ReplicaStateChange(T1, 1, "OnlineReplica", "OfflineReplica")),
        (LeaderElection(T0_2, "OfflinePartition", 0, 1, (0,)),
         LeaderElection(T1, "OfflinePartition", 2, 5, (2,), unclean=True)),
    ), 3),
    (1006.0, "controller", "channel-0", lair_request(), 3),
    (1011.0, "edge:net", "channel-0", LeaderAndIsrResponse(
        Errors.NONE, (PartitionError(T0_2, Errors.STALE_CONTROLLER_EPOCH),)), None),
    (1012.0, "channel-0", "metrics", ChannelRequestCompleted(0, "LeaderAndIsr", 1006.0 + T0, 1007.0 + T0,
                                                             1011.0 + T0, 1, "NONE", 0), 6),
    (1020.0, "controller", "metrics", ControllerEventProcessed("BrokerChange", "BrokerChange", 1000.0 + T0,
                                                               1004.0 + T0, 1020.0 + T0, 0), 3),
    (1021.0, "controller", "metrics", ControllerGauges(True, 1, 1, 0, 2, 4, 0, 0, 2), 3),
    (1040.0, "channel-1", "metrics", ChannelRequestCompleted(1, "UpdateMetadata", 1006.0 + T0, 1008.0 + T0,
                                                             1038.0 + T0, 3, "NONE", 2), None),
    (4600.0, "controller", "metrics", ControllerEventProcessed("BrokerChange", "BrokerChange", 2000.0 + T0,
                                                               2002.0 + T0, 4600.0 + T0, 1), None),
    (5018.0, "controller", "metrics", ControllerEventProcessed("BrokerChange", "BrokerChange", 5000.0 + T0,
                                                               5010.0 + T0, 5018.0 + T0, 0), None),
    (5019.0, "controller", "metrics", ControllerGauges(True, 1, 0, 1, 2, 4, 1, 0, 1), None),
    (6000.0, "controller", "metrics", TopicDeletionProgress("payments", "Queued"), None),
    (6100.0, "controller", "metrics", TopicDeletionProgress("payments", "Started"), None),
    (6600.0, "controller", "metrics", TopicDeletionProgress("payments", "Completed"), None),
    (6601.0, "controller", "metrics", ControllerEventProcessed("TopicDeletion", "TopicDeletion", 6000.0 + T0,
                                                               6001.0 + T0, 6004.0 + T0, 0), None),
    (7000.0, "controller", "metrics", ReassignmentProgress(PAYMENTS_2, "Started", (1, 2)), None),
    (7250.0, "controller", "metrics", ReassignmentProgress(PAYMENTS_2, "Completed", (1, 2)), None),
    (7300.0, "edge:timer", "controller", TimerFired("auto-leader-rebalance-task"), None),
]
BROKER_1 = [
    (1008.0, "edge:net", "replica-manager", lair_request(), None),
    (8000.0, "edge:zk", "controller", ZkWatchEvent("/controller", "CHANGED"), None),
    (8001.0, "controller", "metrics", ControllerChanged(1, -1, False), 2),
]
TRUNCATED = '{"seq":4,"ts":1767225608002.0,"sender":"edge:zk","receiver":"contr'


def lines(records: list[tuple]) -> list[str]:
    return [encode_record(seq, T0 + off, s, r, body, cause)
            for seq, (off, s, r, body, cause) in enumerate(records, start=1)]


def write_trace(folder: str, truncated: bool = True) -> str:
    """broker-0.jsonl and broker-1.jsonl; broker-1's last line is cut short, as by a crash."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "broker-0.jsonl"), "w") as f:
        f.write("\n".join([header("broker-0", 0), *lines(BROKER_0)]) + "\n")
    with open(os.path.join(folder, "broker-1.jsonl"), "w") as f:
        f.write("\n".join([header("broker-1", 1), *lines(BROKER_1)]) + "\n" + (TRUNCATED if truncated else ""))
    return folder
