"""Helpers for real-cluster tests: a LocalCluster with a kazoo client and polling readers of Kafka's znodes.

Tests never sleep a fixed time: they poll for a state with a deadline (`Cluster.wait`), and a timeout names what
was awaited, with the brokers' log tails.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kazoo.client import KazooClient

from edges.transport import TransportError, request
from kactor.cli.kafka_wire import recv_exact
from kactor.cluster import ClusterError, LocalCluster
from messages.common import TopicPartition
from messages.replication import DescribeMetadataCacheRequest
from protocol.framing import RequestHeader, decode_response, encode_request

TEST_SESSION_TIMEOUT_MS = 4000
DEFAULT_WAIT_S = 30.0

KILLED_UNDER_LOAD = "KILLED-UNDER-LOAD"  # marker in a trace folder: see conftest start_cluster(killed_under_load)
SHARED_CLUSTERS: list[Cluster] = []  # conftest's session-wide shared_cluster, once started


def stop_shared_clusters() -> None:
    """Stop the session's shared cluster (conftest shared_cluster): after the last test on it, and before its trace is
    replayed (its brokers flush and close their traces as they stop)."""
    for c in SHARED_CLUSTERS:
        c.stop()


class Cluster:
    """A started LocalCluster plus a kazoo client on its chroot."""

    def __init__(self, lc: LocalCluster) -> None:
        self.lc = lc
        self._zk: KazooClient | None = None

    def start(self) -> Cluster:
        self.lc.start()
        self.wait(lambda: len(self.zk.get_children("/brokers/ids")) == self.lc.n, DEFAULT_WAIT_S,
                  f"{self.lc.n} brokers registered")
        self.wait(lambda: self.controller_id() is not None, DEFAULT_WAIT_S, "a controller")
        # a client's first Metadata must not find a broker the controller has not told about the others yet
        self.wait(self.lc.metadata_complete, DEFAULT_WAIT_S, "every broker's metadata to list them all")
        return self

    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            self._zk = KazooClient(hosts=self.lc.connect_string, timeout=5.0)
            self._zk.start(timeout=15)
        return self._zk

    @property
    def connect_string(self) -> str:
        return self.lc.connect_string

    @property
    def trace_dir(self) -> str | None:
        return self.lc.trace_dir

    def wait(self, predicate: Callable[[], Any], timeout: float = DEFAULT_WAIT_S, what: str = "a state") -> Any:
        try:
            return self.lc.wait_for(predicate, timeout, what)
        except ClusterError as e:
            tails = "\n".join(f"--- broker {b} log tail ---\n{self.lc.log_tail(b, 2000)}" for b in self.lc.logs)
            raise AssertionError(f"{e}\n{tails}") from None

    # -- znode readers --------------------------------------------------------------------------------------------
    def json(self, path: str) -> Any:
        data, _ = self.zk.get(path)
        return json.loads(data)

    def controller_id(self) -> int | None:
        return self.lc.controller_id(self.zk)

    def controller_epoch(self) -> int:
        data, _ = self.zk.get("/controller_epoch")
        return int(data)

    def live_brokers(self) -> list[int]:
        return sorted(int(b) for b in self.zk.get_children("/brokers/ids"))

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        path = f"/brokers/topics/{topic}/partitions/{partition}/state"
        if not self.zk.exists(path):
            return None
        return self.json(path)

    def assignment(self, topic: str) -> dict[int, list[int]] | None:
        if not self.zk.exists(f"/brokers/topics/{topic}"):
            return None
        return {int(p): r for p, r in self.json(f"/brokers/topics/{topic}")["partitions"].items()}

    def wait_partition(self, topic: str, partition: int, pred: Callable[[dict[str, Any]], bool],
                       timeout: float = DEFAULT_WAIT_S, what: str = "") -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            st = self.partition_state(topic, partition)
            return st if st is not None and pred(st) else None
        return self.wait(check, timeout, what or f"{topic}-{partition} state")

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 3,
                     assignment: dict[int, list[int]] | None = None, configs: dict[str, str] | None = None,
                     wait: bool = True) -> None:
        """kafka-topics --create through kactor's admin CLI; waits until every partition has a state znode."""
        args = ["topics", "--zookeeper", self.connect_string, "--create", "--topic", topic]
        if assignment is not None:
            args += ["--replica-assignment", ",".join(":".join(map(str, assignment[p])) for p in sorted(assignment))]
        else:
            args += ["--partitions", str(partitions), "--replication-factor", str(replication_factor)]
        for k, v in (configs or {}).items():
            args += ["--config", f"{k}={v}"]
        run_kactor(*args)
        if wait:
            count = len(assignment) if assignment is not None else partitions
            self.wait(lambda: all(self.partition_state(topic, p) is not None for p in range(count)),
                      DEFAULT_WAIT_S, f"{topic}: {count} partition state znodes")

    # -- brokers ----------------------------------------------------------------------------------------------------
    def kill(self, broker_id: int) -> None:
        self.lc.kill_broker(broker_id, wait_trace_flush=True)

    def stop_broker(self, broker_id: int, sig: int = signal.SIGTERM) -> int:
        return self.lc.stop_broker(broker_id, sig=sig)

    def restart(self, broker_id: int, wait: bool = True) -> None:
        self.lc.start_broker(broker_id)
        if wait:
            self.wait(lambda: broker_id in self.live_brokers(), DEFAULT_WAIT_S, f"broker {broker_id} registered")

    def log_dir(self, broker_id: int) -> str:
        return os.path.join(self.lc.base_dir, f"broker-{broker_id}")

    def stop(self, concurrent: bool = False) -> None:
        """The test's kazoo client, if it was started (left running, it keeps its session and its connection thread,
        whose loop draws from the global ``random``, until the server stops), then the brokers (`LocalCluster.stop`)."""
        try:
            if self._zk is not None:
                self._zk.stop()
                self._zk.close()
                self._zk = None
        finally:
            self.lc.stop(concurrent=concurrent)


@contextmanager
def running(lc: LocalCluster, concurrent: bool = True) -> Iterator[Cluster]:
    """``lc`` started (every broker registered, a controller, complete metadata) for the ``with`` block, and stopped
    however the block ends: a module's or a test's own cluster. ``concurrent`` stops the non-controllers together
    (`LocalCluster.stop`): a test's cluster needs no rolling stop."""
    c = Cluster(lc)
    try:
        c.start()
        yield c
    finally:
        c.stop(concurrent=concurrent)


def raw_request(address: str, api_key: int, version: int, body: dict, timeout: float = 30.0) -> dict:
    """One request as Kafka frames on a fresh connection; the decoded response body."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(encode_request(RequestHeader(api_key, version, 7, "kactor-test"), body))
        size = struct.unpack(">i", recv_exact(s, 4))[0]
        correlation_id, response = decode_response(api_key, version, recv_exact(s, size))
    assert correlation_id == 7
    return response


def now_ms() -> int:
    """The wall clock in ms, what a producer stamps its records with: a batch stamped 0 is older than retention.ms
    (7 days) and goes at the first retention check, 30 s after a broker starts."""
    return int(time.time() * 1000)


def run_kactor(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m kactor ARGS`` as a user would run it; with check, a non-zero exit fails the test with stderr."""
    proc = subprocess.run([sys.executable, "-m", "kactor", *args], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"kactor {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


# -- appended for issue #6 (topic deletion / reassignment tests) -------------------------------------------------------
def produce(c: Cluster, topic: str, partition: int, records: tuple[str, ...], acks: int = -1) -> Any:
    """A Produce request (one record batch) to the partition's current leader over Kafka's protocol; returns the
    partition's answer (a ProducePartitionResponse: error, base_offset)."""
    from edges.transport import request
    from kactor.records import values_batch
    from messages.common import Errors, TopicPartition
    from messages.replication import ProducePartition, ProduceRequest

    tp = TopicPartition(topic, partition)
    deadline = time.monotonic() + 30
    while True:
        state = c.partition_state(topic, partition)
        assert state is not None and state["leader"] >= 0, f"{topic}-{partition} has no leader: {state}"
        answer = request("127.0.0.1", c.lc.ports[state["leader"]],
                         ProduceRequest(acks, 30000, (ProducePartition(tp, values_batch(records, now_ms())),)),
                         timeout_s=30.0)
        (result,) = answer.partitions
        # the state znode names a leader before it has handled its LeaderAndIsr: nothing was written, and a client
        # retries these (a CI failure: NOT_LEADER_OR_FOLLOWER right after the znode said the broker leads)
        if result.error not in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION) \
                or time.monotonic() > deadline:
            return result
        time.sleep(0.1)


def topic_dirs(c: Cluster, broker_id: int, topic: str) -> list[str]:
    """The ``<topic>-<partition>`` directories (also ``…-delete`` leftovers) in a broker's log dir."""
    path = c.log_dir(broker_id)
    if not os.path.isdir(path):
        return []
    prefix = f"{topic}-"
    return sorted(d for d in os.listdir(path)
                  if d.startswith(prefix) and d[len(prefix):].split(".")[0].isdigit())


def segment_records(c: Cluster, broker_id: int, topic: str, partition: int) -> list[list[Any]]:
    """The records of a partition's segment files on a broker, ``[offset, leader_epoch, value]`` each."""
    return partition_dir_records(os.path.join(c.log_dir(broker_id), f"{topic}-{partition}"))


def partition_dir_records(folder: str) -> list[list[Any]]:
    """``[offset, leader_epoch, value]`` of every record in the ``.log`` segments of a partition's directory (the
    record batches as the log wrote them; a batch still being written ends the list)."""
    from kactor.records import read_records
    from protocol.errors import ProtocolError
    from protocol.records import read_batch_header

    data = b""
    for name in sorted(os.listdir(folder)):
        if name.endswith(".log"):
            with open(os.path.join(folder, name), "rb") as f:
                data += f.read()
    out: list[list[Any]] = []
    pos = 0
    while pos < len(data):
        try:
            batch = read_batch_header(data, pos)
            out.extend([o, e, v] for o, e, v in read_records(batch.raw))
        except ProtocolError:
            break
        pos += len(batch.raw)
    return out


def ask(c: Cluster, broker_id: int, body: Any, timeout_s: float = 10.0) -> Any:
    """``body`` as its Kafka request to broker ``broker_id``; the decoded internal answer."""
    return request("127.0.0.1", c.lc.ports[broker_id], body, timeout_s=timeout_s)


def cached_state(c: Cluster, broker_id: int, tp: TopicPartition) -> Any:
    """The UpdateMetadataPartitionState broker ``broker_id``'s MetadataCache holds for ``tp`` (None if absent)."""
    try:
        answer = ask(c, broker_id, DescribeMetadataCacheRequest((tp.topic,)), 5.0)
    except TransportError:
        return None
    return next((s for s in answer.partition_states if s.topic_partition == tp), None)


def wait_cached(c: Cluster, broker_id: int, tp: TopicPartition, pred: Any, what: str) -> Any:
    """Poll broker ``broker_id``'s cached state of ``tp`` until ``pred(state)``; returns the state."""
    def check() -> Any:
        st = cached_state(c, broker_id, tp)
        return st if st is not None and pred(st) else None
    return c.wait(check, 30, f"broker {broker_id}'s metadata {what}")
