"""The cluster a test session shares (`KafkaTestCluster`) and the per-test topic factory (`TopicFactory`).

A `KafkaTestCluster` is a `kactor.cluster.LocalCluster` — one embedded ZooKeeper, N broker processes on loopback, the
brokers' configs and security modes as ``kactor cluster`` has them — with what a test of a Kafka application needs
of it: where to connect (``bootstrap_servers``, ``client_config``), topics whose leaders are elected before the test
writes to them, and faults on command. The faults are ``kactor chaos``'s (kactor/chaos/runner.py): SIGKILL, SIGTERM
and restart, SIGSTOP/SIGCONT, a SIGSTOP held until ZooKeeper has expired the broker's session, and a network
partition or a slow link between two brokers through the fault file every broker's transport polls
(edges/net_faults.py). After each test the plugin heals what the test broke (`heal`): paused brokers continue,
partitions and slow links end, dead brokers start again, so the next test finds the cluster whole without anything
being restarted that was not broken.

A test cluster is tuned for tests as Kafka's own test harness is (TEST_OVERRIDES; an override of the same key given
to the plugin wins): a 6 s ZooKeeper session, so a killed broker's leaderships move within seconds; 3 partitions for
__consumer_offsets and __transaction_state instead of 50, so the first consumer group or transactional producer
does not wait for 50 leaders; no initial rebalance delay.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from kactor.cluster import ClusterError, LocalCluster

T = TypeVar("T")

# Kafka's test harness values (kafka.utils.TestUtils.createBrokerConfig, KafkaServerTestHarness) where they make a
# test faster and change no behaviour a test asserts
TEST_OVERRIDES = (
    "zookeeper.session.timeout.ms=6000",
    "controlled.shutdown.retry.backoff.ms=200",
    "offsets.topic.num.partitions=3",
    "transaction.state.log.num.partitions=3",
    "group.initial.rebalance.delay.ms=0",
)
# ZooKeeper grants sessions of 2 to 20 ticks: 1-10 s, so zookeeper.session.timeout.ms=6000 is granted as asked
ZK_TICK_MS = 500
DEFAULT_TIMEOUT_S = 60.0
POLL_S = 0.01  # a topic's leaders are elected in tens of milliseconds: a coarser poll would dominate kafka_topic
LEGAL_TOPIC_CHARS = re.compile(r"[^a-zA-Z0-9._-]")
MAX_TOPIC_PREFIX = 200  # Kafka's topic names are at most 249 characters: room for the unique suffix


class KafkaTestClusterError(AssertionError):
    """A state the cluster did not reach in time; its message names it and ends with the brokers' log tails."""


class Fault:
    """A fault in force until `heal` (or the end of a ``with`` block): ``with cluster.pause_broker(1): ...`` or
    ``paused = cluster.pause_broker(1); ...; paused.heal()``. Healing twice is healing once."""

    def __init__(self, what: str, heal: Callable[[], None]) -> None:
        self.what = what
        self._heal: Callable[[], None] | None = heal

    def heal(self) -> None:
        heal, self._heal = self._heal, None
        if heal is not None:
            heal()

    def __enter__(self) -> Fault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.heal()

    def __repr__(self) -> str:
        return f"<Fault {self.what}{'' if self._heal else ' (healed)'}>"


class KafkaTestCluster:
    """One embedded ZooKeeper and ``brokers`` broker processes for a test session, with fault helpers.

    ``overrides`` are broker configs (``key=value``, Kafka's names) after TEST_OVERRIDES; ``security`` is one of
    ``kactor cluster --security``'s protocols (plaintext, ssl, sasl_plaintext, sasl_ssl: ``client_config`` then
    carries the CA and the admin user's login); ``keep`` leaves the cluster's folder (log dirs, broker logs) behind
    for a look after the session. Broker ids are 0..brokers-1.
    """

    def __init__(self, brokers: int = 3, overrides: Iterable[str] = (), security: str = "plaintext",
                 keep: bool = False, zk_tick_ms: int = ZK_TICK_MS, log_level: str = "WARNING") -> None:
        from edges.net_faults import FAULTS_ENV, write_rules

        self.keep = keep
        base_dir = tempfile.mkdtemp(prefix="kactor-pytest-") if keep else None
        self.lc = LocalCluster(brokers, base_dir=base_dir, overrides=[*TEST_OVERRIDES, *overrides],
                               zk_tick_ms=zk_tick_ms, log_level=log_level, security=security)
        # kactor chaos's partitions: every broker's transport polls this file (edges/net_faults.py)
        self.fault_file = os.path.join(self.lc.base_dir, "net-faults.json")
        write_rules(self.fault_file, [])
        self.lc.broker_env[FAULTS_ENV] = self.fault_file
        self._cuts: list[tuple[str, str]] = []
        self._delays: list[tuple[str, str, float]] = []
        self._paused: set[int] = set()
        self._started_ms: dict[int, float] = {}
        self._zk: Any = None
        self._admin: Any = None
        self._wire_props: Any = None

    # -- where to connect -----------------------------------------------------------------------------------------
    @property
    def brokers(self) -> list[int]:
        """Every broker id of the cluster, running or not."""
        return list(range(self.lc.n))

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of every broker, comma-separated: a client's ``bootstrap.servers``."""
        return ",".join("{}:{}".format(*self.lc.broker_address(b)) for b in self.brokers)

    @property
    def client_config(self) -> dict[str, str]:
        """librdkafka's settings (confluent-kafka) to reach the cluster: ``bootstrap.servers`` and, on a secured
        cluster, ``security.protocol``, ``ssl.ca.location``, ``sasl.mechanism``, ``sasl.username``/``password``."""
        secure = self.lc.secure.librdkafka if self.lc.secure is not None else {}
        return {"bootstrap.servers": self.bootstrap_servers, **secure}

    @property
    def client_properties_file(self) -> str | None:
        """A secured cluster's client properties file (Java's names, for Kafka's tools' --command-config)."""
        return self.lc.secure.client_properties if self.lc.secure is not None else None

    @property
    def zookeeper_connect(self) -> str:
        return self.lc.connect_string

    @property
    def zk(self) -> Any:
        """A kazoo client on the cluster's ZooKeeper (started on first use, stopped with the cluster)."""
        if self._zk is None:
            self._zk = self.lc.client()
        return self._zk

    def admin(self) -> Any:
        """A confluent-kafka AdminClient on the cluster (one, kept for the session)."""
        if self._admin is None:
            from kactor.kafka_clients import admin_client

            self._admin = admin_client(self.bootstrap_servers, "kactor-testing",
                                       {k: v for k, v in self.client_config.items() if k != "bootstrap.servers"})
        return self._admin

    # -- life -----------------------------------------------------------------------------------------------------
    def start(self, timeout: float = DEFAULT_TIMEOUT_S) -> KafkaTestCluster:
        """ZooKeeper, then every broker; returns once every broker is registered and answers Metadata with all of
        them and the controller (ready for any client)."""
        now_ms = time.time() * 1000
        self._started_ms = dict.fromkeys(self.brokers, now_ms)
        threading.Thread(target=preload_clients, name="kactor-testing-preload", daemon=True).start()
        try:
            self.lc.start()
        except BaseException:
            self.lc.stop(concurrent=True)
            raise
        self.wait_ready(timeout, starting=True)
        # the session's admin client connected now, so that the first kafka_topic costs what the others do
        self.admin().list_topics(timeout=timeout)
        return self

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT_S, starting: bool = False) -> None:
        """Every running broker registered by its current process, a controller, and every running broker's
        Metadata listing them all. ``starting``: the cluster's start, where a broker that gave up on ZooKeeper as it
        began serving is started again once (`LocalCluster.restart_brokers_that_gave_up`)."""
        self.wait(lambda: (starting and self.lc.restart_brokers_that_gave_up()) or self._all_registered(), timeout,
                  "every running broker registered")
        self.wait(lambda: self.lc.controller_id(self.zk) is not None, timeout, "a controller")
        self.wait(self.lc.metadata_complete, timeout, "every broker's Metadata to list every running broker")

    def stop(self) -> None:
        """Stop the brokers (paused ones continued first) and ZooKeeper; the folder goes unless ``keep``."""
        for client in (self._zk,):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.stop()
                    client.close()
        self._zk = None
        self._admin = None
        self.lc.stop(concurrent=True)

    def running(self, broker_id: int) -> bool:
        proc = self.lc.procs.get(broker_id)
        return proc is not None and proc.poll() is None

    # -- waiting --------------------------------------------------------------------------------------------------
    def wait(self, predicate: Callable[[], T], timeout: float = DEFAULT_TIMEOUT_S, what: str = "a state",
             interval: float = POLL_S) -> T:
        """Poll ``predicate()`` until it returns something other than None or False, which is returned (broker 0 is
        an answer: a bare truth test would wait past it); KafkaTestClusterError naming ``what`` and showing the
        brokers' log tails on timeout."""

        def answered() -> tuple[T] | None:
            value = predicate()
            return None if value is None or value is False else (value,)

        try:
            return self.lc.wait_for(answered, timeout, what, interval=interval)[0]  # type: ignore[no-any-return]
        except ClusterError as e:
            tails = "\n".join(f"--- broker {b} log tail ---\n{self.lc.log_tail(b, 1500)}" for b in sorted(self.lc.logs))
            raise KafkaTestClusterError(f"{e}\n{tails}") from None

    def _all_registered(self) -> bool:
        """Each running broker's /brokers/ids znode created by its current process (a killed broker's lingers until
        its session expires: its creation time tells them apart), and no paused broker among them."""
        from protocol.zk import paths

        for b in self.brokers:
            if not self.running(b) or b in self._paused:
                continue
            stat = self.zk.exists(paths.BrokerIdZNode.path(b))
            if stat is None or stat.ctime < self._started_ms.get(b, 0):
                return False
        return True

    # -- reading the cluster --------------------------------------------------------------------------------------
    def controller(self, timeout: float = DEFAULT_TIMEOUT_S) -> int:
        """The active controller's broker id (/controller), waiting for an election when there is none."""
        return self.wait(lambda: self.lc.controller_id(self.zk), timeout, "a controller")  # type: ignore[return-value]

    def replicas(self, topic: str) -> dict[int, list[int]]:
        """Partition → its replicas, from /brokers/topics/<topic>."""
        from protocol.zk import paths, znodes

        data, _ = self.zk.get(paths.TopicZNode.path(topic))
        return {tp.partition: list(ra.replicas)
                for tp, ra in znodes.decode_topic_assignment(topic, data.decode()).items()}

    def partition_state(self, topic: str, partition: int = 0) -> tuple[int, list[int]]:
        """(leader, ISR) of a partition from its state znode; leader -1 while it has none."""
        from messages.common import TopicPartition
        from protocol.zk import paths, znodes

        data, stat = self.zk.get(paths.TopicPartitionStateZNode.path(TopicPartition(topic, partition)))
        state = znodes.decode_partition_state(data.decode(), stat.version)
        if state is None:
            return -1, []
        return state.leader_and_isr.leader, list(state.leader_and_isr.isr)

    def leader(self, topic: str, partition: int = 0) -> int:
        """The partition's leader as ZooKeeper has it now (-1: none)."""
        return self.partition_state(topic, partition)[0]

    def isr(self, topic: str, partition: int = 0) -> list[int]:
        return self.partition_state(topic, partition)[1]

    def group_coordinator(self, group_id: str) -> int:
        """The broker coordinating consumer group ``group_id``: the leader of its __consumer_offsets partition
        (GroupMetadataManager.partitionFor), -1 before that topic exists."""
        return self._internal_leader("__consumer_offsets", group_id)

    def transaction_coordinator(self, transactional_id: str) -> int:
        """The broker coordinating ``transactional_id``: the leader of its __transaction_state partition
        (TransactionStateManager.partitionFor), -1 before that topic exists."""
        return self._internal_leader("__transaction_state", transactional_id)

    def _internal_leader(self, topic: str, key: str) -> int:
        from core.coordinator.group.group_metadata_manager import partition_for
        from protocol.zk import paths

        if self.zk.exists(paths.TopicZNode.path(topic)) is None:
            return -1
        return self.leader(topic, partition_for(key, len(self.replicas(topic))))

    def wait_for_leader(self, topic: str, partition: int = 0, not_on: Iterable[int] = (),
                        timeout: float = DEFAULT_TIMEOUT_S) -> int:
        """The partition's leader once it has one that is not in ``not_on`` (e.g. the broker just killed)."""
        excluded = {-1, *not_on}

        def elected() -> int | None:
            leader = self.leader(topic, partition)
            return None if leader in excluded else leader

        return self.wait(elected, timeout, f"a leader of {topic}-{partition} other than {sorted(excluded)}",
                         interval=0.05)  # type: ignore[return-value]

    def wait_for_isr(self, topic: str, partition: int | None = None, isr: Iterable[int] | None = None,
                     timeout: float = DEFAULT_TIMEOUT_S) -> dict[int, list[int]]:
        """Wait until the ISR of ``partition`` (every partition of the topic when None) is ``isr`` (as a set), or
        by default its full replica set; partition → ISR."""
        wanted = None if isr is None else set(isr)

        def full() -> dict[int, list[int]] | None:
            replicas = self.replicas(topic)
            chosen = replicas if partition is None else {partition: replicas[partition]}
            now = {p: self.isr(topic, p) for p in chosen}
            ok = all(set(now[p]) == (set(chosen[p]) if wanted is None else wanted) for p in chosen)
            return now if ok else None

        what = (f"the ISR of {topic}" + ("" if partition is None else f"-{partition}")
                + (" to be the full replica set" if wanted is None else f" to be {sorted(wanted)}"))
        return self.wait(full, timeout, what, interval=0.05)  # type: ignore[return-value]

    # -- faults ---------------------------------------------------------------------------------------------------
    def kill_broker(self, broker_id: int) -> None:
        """SIGKILL: a crash. ZooKeeper notices when the broker's session expires (zookeeper.session.timeout.ms,
        6 s here), and the controller moves its leaderships then."""
        self._check_broker(broker_id)
        self._paused.discard(broker_id)
        self.lc.kill_broker(broker_id)

    def stop_broker(self, broker_id: int, timeout: float = DEFAULT_TIMEOUT_S) -> int:
        """SIGTERM: an orderly stop (controlled shutdown: leaderships handed off first); its exit code."""
        self._check_broker(broker_id)
        if broker_id in self._paused:
            self.resume_broker(broker_id)
        return self.lc.stop_broker(broker_id, timeout=timeout)

    def restart_broker(self, broker_id: int, wait: bool = True, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Start the broker again with its id, listener and log dir (stopped in order first if it runs); with
        ``wait``, returns once it is registered and every broker's Metadata lists it."""
        self._check_broker(broker_id)
        if self.running(broker_id):
            self.stop_broker(broker_id, timeout)
        self._started_ms[broker_id] = time.time() * 1000
        self.lc.start_broker(broker_id)
        if wait:
            self.wait_ready(timeout)

    def pause_broker(self, broker_id: int) -> Fault:
        """SIGSTOP: the broker freezes (no answers, no heartbeats to ZooKeeper) until the fault is healed (SIGCONT):
        ``with cluster.pause_broker(1): ...``. Held past zookeeper.session.timeout.ms its session expires."""
        self._check_broker(broker_id)
        if not self.running(broker_id):
            raise KafkaTestClusterError(f"broker {broker_id} is not running: it cannot be paused")
        self.lc.signal_broker(broker_id, signal.SIGSTOP)
        self._paused.add(broker_id)
        return Fault(f"broker {broker_id} paused", lambda: self.resume_broker(broker_id))

    def resume_broker(self, broker_id: int) -> None:
        """SIGCONT a paused broker."""
        self._paused.discard(broker_id)
        self.lc.signal_broker(broker_id, signal.SIGCONT)

    def expire_session(self, broker_id: int, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Make ZooKeeper expire the broker's session, as ``kactor chaos``'s sigstop fault does: the broker is
        frozen until its registration (/brokers/ids/<id>, an ephemeral of that session) is gone, then continued;
        returns once it has registered again with a new session. The controller meanwhile sees it fail
        (onBrokerFailure) and moves its leaderships; a controller so expired resigns."""
        from protocol.zk import paths

        path = paths.BrokerIdZNode.path(broker_id)
        stat = self.zk.exists(path)
        if stat is None:
            raise KafkaTestClusterError(f"broker {broker_id} is not registered: it has no session to expire")
        owner = stat.ephemeralOwner
        with self.pause_broker(broker_id):
            self.wait(lambda: self.zk.exists(path) is None, timeout,
                      f"ZooKeeper to expire broker {broker_id}'s session", interval=0.05)

        def registered_again() -> bool:
            again = self.zk.exists(path)
            return again is not None and again.ephemeralOwner != owner

        self.wait(registered_again, timeout, f"broker {broker_id} registered with a new session", interval=0.05)

    def partition(self, a: int, b: int) -> Fault:
        """A network partition between brokers ``a`` and ``b``, both directions, at their transports (kactor chaos's
        ``partition`` fault): neither opens nor keeps a connection to the other — replication and controller
        requests between them fail — while clients and ZooKeeper still reach both. Healed with the fault."""
        from edges.net_faults import endpoint, write_rules

        ends = (endpoint(*self.lc.broker_address(self._check_broker(a))),
                endpoint(*self.lc.broker_address(self._check_broker(b))))
        self._cuts.append(ends)
        write_rules(self.fault_file, self._cuts, self._delays)

        def heal() -> None:
            if ends in self._cuts:
                self._cuts.remove(ends)
            write_rules(self.fault_file, self._cuts, self._delays)

        return Fault(f"brokers {a} and {b} partitioned", heal)

    def slow_link(self, a: int, b: int, delay_ms: float) -> Fault:
        """A slow link between brokers ``a`` and ``b``: each holds every request it sends to the other (fetches,
        the controller's requests) for ``delay_ms`` before writing it (edges/net_faults.py's delay rule), so a
        follower behind it lags by about the delay and an acks=all produce waits about that much longer. Clients
        and ZooKeeper are not slowed. Takes effect within 0.1 s; healed with the fault."""
        from edges.net_faults import endpoint, write_rules

        if delay_ms < 0:
            raise KafkaTestClusterError(f"a link's delay must be at least 0 ms, not {delay_ms}")
        rule = (endpoint(*self.lc.broker_address(self._check_broker(a))),
                endpoint(*self.lc.broker_address(self._check_broker(b))), float(delay_ms))
        self._delays.append(rule)
        write_rules(self.fault_file, self._cuts, self._delays)

        def heal() -> None:
            if rule in self._delays:
                self._delays.remove(rule)
            write_rules(self.fault_file, self._cuts, self._delays)

        return Fault(f"link between brokers {a} and {b} slowed by {delay_ms:g} ms", heal)

    def heal(self, timeout: float = DEFAULT_TIMEOUT_S) -> bool:
        """Undo every fault a test left: partitions and slow links end, paused brokers continue, dead brokers start
        again; waits until the cluster is ready again. Whether there was anything to heal."""
        from edges.net_faults import write_rules

        broken = bool(self._cuts or self._delays or self._paused) or not all(self.running(b) for b in self.brokers)
        if not broken:
            return False
        self._cuts.clear()
        self._delays.clear()
        write_rules(self.fault_file, [])
        for b in list(self._paused):
            self.resume_broker(b)
        for b in self.brokers:
            if not self.running(b):
                self._started_ms[b] = time.time() * 1000
                self.lc.start_broker(b)
        self.wait_ready(timeout)
        return True

    def _check_broker(self, broker_id: int) -> int:
        if broker_id not in self.brokers:
            raise KafkaTestClusterError(f"no broker {broker_id}: the cluster's brokers are {self.brokers}")
        return broker_id

    # -- topics ---------------------------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int | None = None,
                     config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> str:
        """CreateTopics through the cluster (an AdminClient, as an application's set-up would), then wait until
        every partition has a leader and every running broker's Metadata names it: a client's first produce or
        fetch finds it, whichever broker it asks. The replication factor defaults to min(3, brokers)."""
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        rf = min(3, self.lc.n) if replication_factor is None else replication_factor
        deadline = time.monotonic() + timeout
        while True:
            future = self.admin().create_topics([NewTopic(name, partitions, rf, config=dict(config or {}))],
                                                operation_timeout=timeout, request_timeout=timeout)[name]
            try:
                future.result(timeout)
                break
            except KafkaException as e:
                # a controller that moved (a test killed or restarted it) since the admin client last looked: it
                # finds the new one on the next request, as Kafka's AdminClient retries NOT_CONTROLLER
                error = e.args[0]
                if error.code() != KafkaError.NOT_CONTROLLER and not error.retriable():
                    raise
                if time.monotonic() > deadline:
                    raise KafkaTestClusterError(f"creating topic {name}: {error}") from None
                with contextlib.suppress(KafkaException):
                    self.admin().list_topics(timeout=5)  # a Metadata request: the controller's id as it is now
                time.sleep(0.05)
        self.wait(lambda: self._led_everywhere(name, partitions), timeout,
                  f"leaders of {partitions} partition(s) of {name} in every broker's Metadata")
        return name

    def delete_topics(self, names: Iterable[str]) -> None:
        """DeleteTopics for ``names``, not waited for (the controller deletes them in the background)."""
        names = list(names)
        if names and any(self.running(b) for b in self.brokers):
            self.admin().delete_topics(names, operation_timeout=0, request_timeout=10)

    def _led_everywhere(self, topic: str, partitions: int) -> bool:
        from kactor.cli import kafka_wire

        body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
        for b in self.brokers:
            if not self.running(b) or b in self._paused:
                continue
            answer = kafka_wire.exchange(self.lc.broker_address(b), *kafka_wire.METADATA, body, timeout_s=5.0,
                                         props=self._props())
            (t,) = answer["topics"]
            if t["error_code"] != 0 or len(t["partitions"]) != partitions:
                return False
            if any(p["error_code"] != 0 or p["leader_id"] < 0 for p in t["partitions"]):
                return False
        return True

    def _props(self) -> Any:
        """How kactor's wire client connects to this cluster's listener (its client properties file)."""
        if self._wire_props is None:
            from kactor.cli.client_properties import PLAINTEXT, load

            self._wire_props = (PLAINTEXT if self.lc.secure is None else
                                load(self.lc.secure.client_properties, "--command-config", lambda _: None))
        return self._wire_props

    def __enter__(self) -> KafkaTestCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def preload_clients() -> None:
    """Import what the readiness checks and the first kafka_topic use — kactor's wire client with Kafka's schemas
    (protocol.framing: 0.1-0.5 s of CPU) and confluent-kafka's AdminClient — while ZooKeeper and the brokers start,
    instead of after the last broker registered, when `KafkaTestCluster.wait_ready` first asks for Metadata (issue
    #41: 0.4-0.5 s of a session's first cluster start). A failure here is left for the checks to meet and report."""
    with contextlib.suppress(Exception):
        import confluent_kafka.admin  # noqa: F401

        import kactor.cli.kafka_wire  # noqa: F401
        import protocol.framing  # noqa: F401


def topic_prefix(test_name: str) -> str:
    """A legal topic-name prefix from a test's name: Kafka's legal characters only, at most MAX_TOPIC_PREFIX."""
    return LEGAL_TOPIC_CHARS.sub("_", test_name)[:MAX_TOPIC_PREFIX].strip("._") or "test"


class TopicFactory:
    """``kafka_topic(partitions=1, replication_factor=None, config=None, name=None)`` → a new topic's name, unique
    to the test (its name, then a random suffix), its leaders elected. Topics are deleted after the test unless
    ``keep``."""

    def __init__(self, cluster: KafkaTestCluster, prefix: str, keep: bool = False) -> None:
        self.cluster = cluster
        self.prefix = topic_prefix(prefix)
        self.keep = keep
        self.created: list[str] = []

    def __call__(self, partitions: int = 1, replication_factor: int | None = None,
                 config: Mapping[str, str] | None = None, name: str | None = None) -> str:
        topic = name or f"{self.prefix}-{secrets.token_hex(4)}"
        self.cluster.create_topic(topic, partitions, replication_factor, config)
        self.created.append(topic)
        return topic

    def cleanup(self) -> None:
        if not self.keep:
            self.cluster.delete_topics(self.created)
        self.created = []


@contextlib.contextmanager
def started(cluster: KafkaTestCluster) -> Iterator[KafkaTestCluster]:
    """``cluster`` started for the ``with`` block, stopped after it."""
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
