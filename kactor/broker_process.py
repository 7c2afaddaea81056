"""One broker as one OS process (Kafka's kafka-server-start.sh): its edges, its actors, its lifecycle.

This is the composition root: every edge — the kazoo client and its executor, the loopback transport, the timer
thread, the metrics endpoint, the log-dir probe, the process's GC and allocator policies — is created and wired here
alone and handed to the runtime as `actors.edge_slots.Edges`; the actors (`actors.broker`) are spawned on the
runtime's simpleSystemBase; the driver thread delivers every input.
SIGTERM asks for an orderly stop (controlled shutdown when enabled) and the process exits 0 once it is done;
closing the ZooKeeper session on the way out removes /brokers/ids/<id> at once, as Kafka's shutdown does.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from actors.broker import spawn_broker_actors
from actors.edge_slots import Edges
from actors.runtime import Runtime
from edges.trace_writer import TraceWriter
from kactor.config import KafkaConfig
from kactor.trace.reader import new_trace_path
from messages.broker_lifecycle import (
    BrokerShutdownComplete,
    BrokerShutdownRequested,
    BrokerStartup,
    ControllerInit,
    ReplicaManagerInit,
)

log = logging.getLogger("kactor.broker")

# LoggingSignalHandler.SIGNALS: TERM, INT and HUP, each an orderly stop
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# test-data libraries a broker process never uses but its dependencies would load and drive when importable: kio's
# phantom types (kio/static/_phantom.py) import hypothesis and register a strategy per type at import, 0.15-0.45 s of
# CPU before every broker registers (issue #41)
TEST_ONLY_MODULES = ("hypothesis",)



class BrokerStartError(RuntimeError):
    """The broker cannot start (ZooKeeper unreachable, port in use, unusable log dir...): one clear line."""


def skip_test_only_imports() -> None:
    """In the broker's own process, before its first import of the wire schemas: every TEST_ONLY_MODULES module
    not yet imported is made unimportable (``sys.modules[name] = None``), so a library that uses it only when it is
    importable leaves it. Not for a process that runs tests (a test calling BrokerProcess.start keeps hypothesis):
    only `BrokerProcess.run`, kafka-server-start's path, calls it."""
    for name in TEST_ONLY_MODULES:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def registration_json(config: KafkaConfig, now_ms: int, bound_ports: dict[str, int] | None = None) -> str:
    """/brokers/ids/<id> content, version 4 (Kafka 2.6 with IBP 2.6) — KafkaServer.createBrokerInfo: every
    advertised listener (the listeners when none is advertised) with its security protocol.

    An advertised endpoint with port 0 gets the port its listener actually bound (``bound_ports``: listener name →
    port, ``socketServer.boundPort(listenerName)``): registered as 0, nobody could reach the broker.
    """
    from messages.common import Broker
    from protocol.zk import znodes

    endpoints = tuple(attrs.evolve(ep, port=(bound_ports or {}).get(ep.listener_name, 0)) if ep.port == 0 else ep
                      for ep in config.advertised_listeners)
    broker = Broker(config.broker_id, endpoints, config["broker.rack"])
    return znodes.encode_broker(broker, timestamp_ms=now_ms)


def zookeeper_security(cfg: KafkaConfig) -> dict[str, Any]:
    """zk_bridge.executor.connect's security arguments: the brokers' SASL login (the JAAS Client section KAFKA_OPTS
    names, as Kafka's) and digest login (kactor's), and whether their znodes get ZkData.defaultAcls
    (KafkaServer.initZkClient's isSecure = zookeeper.set.acl)."""
    return {"digest": cfg["kactor.zookeeper.digest"], "set_acl": cfg["zookeeper.set.acl"],
            "sasl": cfg.zookeeper_sasl}


def plug_admin_manager(rt: Runtime, cfg: KafkaConfig, transport: Any) -> Callable[[], None]:
    """The admin APIs' edge handler: an AdminManager on a ZooKeeper session of its own (its requests wait on
    ZooKeeper in the transport's handler threads, never in an actor), handing controller events to this broker's
    controller as network inputs. Returns the closer of its session."""
    from zk_bridge.admin.admin_manager import AdminManager
    from zk_bridge.executor import connect

    client = connect(cfg["zookeeper.connect"], cfg["zookeeper.session.timeout.ms"],
                     cfg["zookeeper.connection.timeout.ms"] / 1000.0, allow_remote=not cfg.loopback_only,
                     **zookeeper_security(cfg))
    manager = AdminManager(client, cfg,
                           controller_events=lambda event: rt.inject(names.CONTROLLER, event, names.EDGE_NET))
    transport.add_edge_handler("admin", manager.handle_request)
    return lambda: (client.stop(), client.close())


def controller_config(config: KafkaConfig, registration: str) -> Any:
    from core.controller.config import ControllerConfig

    return ControllerConfig.from_kafka_config(config, registration)


def get_or_create_cluster_id(client: Any) -> str:
    """KafkaServer.getOrGenerateClusterId: /cluster/id's id, or a new one (a random UUID in URL-safe base64 without
    padding, CoreUtils.generateUuidAsBase64) created there if the node is absent — the first broker's wins a race."""
    import base64
    import uuid

    from kazoo.exceptions import NodeExistsError, NoNodeError

    from protocol.zk import paths, znodes

    try:
        data, _ = client.get(paths.ClusterIdZNode)
    except NoNodeError:
        new = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        try:
            client.create(paths.ClusterIdZNode, znodes.encode_cluster_id(new).encode("utf-8"), makepath=True)
        except NodeExistsError:
            pass
        data, _ = client.get(paths.ClusterIdZNode)
    return znodes.decode_cluster_id(data.decode("utf-8") if data is not None else None)


def wire_zk_events(rt: Runtime, executor: Any, bridge: str = names.ZK) -> None:
    """ZooKeeper's watch firings and session changes, from kazoo's threads, become inputs of the ZkBridgeActor
    (Kafka's ZooKeeperClient hands them to its registered handlers), recorded as sent by "edge:zk"."""
    executor.on_watch = lambda event: rt.inject(bridge, event, sender=names.EDGE_ZK)
    executor.on_session = lambda event: rt.inject(bridge, event, sender=names.EDGE_ZK)


class BrokerProcess:
    """Builds and runs one broker; `run()` blocks until the broker has stopped and returns the exit code."""

    def __init__(self, config: KafkaConfig, trace_dir: str | None = None) -> None:
        self.config = config
        self.trace_dir = trace_dir or config["kactor.trace.dir"]
        self.runtime: Runtime | None = None
        self._done = threading.Event()
        self._shutdown: BrokerShutdownComplete | None = None
        self._closers: list[Any] = []
        self._cluster_id: str | None = None
        # LogManager.dirLocks: every log dir's .lock, from before any log is opened until after the last is closed
        self._dir_locks: Any = None

    # called by the kafka-server actor (through runtime.edges.process)
    def startup_complete(self) -> None:
        """KafkaServer.startup's last step, socketServer.startProcessingRequests: the listeners, bound since the
        start (the registration names their ports), start reading requests now that every actor exists and the
        broker is registered. Before, a client's request could reach an actor not yet spawned or initialised."""
        self._checkpoint_broker_metadata()
        net = self.runtime.edges.net if self.runtime is not None else None
        if net is not None:
            net.start_processing_requests()  # type: ignore[attr-defined]
        log.info("broker %d: start-up complete, processing requests", self.config.broker_id)

    def _checkpoint_broker_metadata(self) -> None:
        """KafkaServer.checkpointBrokerMetadata, once the broker is registered: meta.properties (version, broker.id,
        cluster.id) in every log dir still usable. A dir where it cannot be written is left to the log-dir probe
        (Kafka fails the start-up; here the start is past the point where it could still be refused)."""
        from core.broker.broker_metadata import BrokerMetadata
        from edges.log_dirs import LogDirProbe, write_broker_metadata

        metadata = BrokerMetadata(self.config.broker_id, self._cluster_id)
        for d in self.config.log_dirs:
            if not LogDirProbe.usable(d, write_test=False):
                continue
            try:
                write_broker_metadata((d,), metadata)
            except OSError as e:
                log.error("Failed to write meta.properties in %s due to %s", d, e)
                probe = self.runtime.edges.log_dirs if self.runtime is not None else None
                if probe is not None:
                    probe.poke()

    def stop_processing_requests(self) -> None:
        """KafkaServer.shutdown after controlledShutdown: socketServer.stopProcessingRequests closes every client
        connection and stops accepting, before the replica manager and the rest stop."""
        net = self.runtime.edges.net if self.runtime is not None else None
        if net is not None:
            net.stop_processing_requests()  # type: ignore[attr-defined]

    def shutdown_complete(self, msg: BrokerShutdownComplete) -> None:
        self._shutdown = msg
        self._done.set()

    def _prepare_log_dirs(self) -> None:
        for d in self.config.log_dirs:
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as e:
                raise BrokerStartError(f"log dir {d} is not usable: {e.strerror}") from None
            if not os.access(d, os.W_OK):
                raise BrokerStartError(f"log dir {d} is not writable")

    def _own_log_dirs(self, cluster_id: str) -> None:
        """Before any log is opened: KafkaServer.startup's getBrokerMetadataAndOfflineDirs and its checks of the
        dirs' meta.properties against ZooKeeper's /cluster/id and the configured broker.id, then
        LogManager.lockLogDirs. A dir of another cluster or another broker, or a dir a live process holds, refuses the
        start (BrokerStartError with Kafka's exception and message) before the broker registers or writes anything
        into the dirs; the locks stay held until the process has closed its logs."""
        from core.broker.broker_metadata import BrokerMetadataError, check_broker_metadata, consistent_metadata
        from edges.log_dirs import (
            LogDirLockError,
            LogDirLocks,
            read_broker_metadata,
            remove_broker_metadata_leftovers,
        )

        dirs = tuple(self.config.log_dirs)
        try:
            check_broker_metadata(consistent_metadata(read_broker_metadata(dirs)), cluster_id, self.config.broker_id)
            self._dir_locks = LogDirLocks(dirs).acquire()
            remove_broker_metadata_leftovers(dirs)
        except BrokerMetadataError as e:
            raise BrokerStartError(str(e)) from None
        except LogDirLockError as e:
            raise BrokerStartError(f"org.apache.kafka.common.KafkaException: {e}") from None
        except OSError as e:
            raise BrokerStartError(f"log dir {e.filename or ''} is not usable: {e.strerror or e}") from None
        self._cluster_id = cluster_id

    def start(self) -> Runtime:
        from actors.broker_channel_actor import BrokerChannelActor  # noqa: F401 - registers message types
        from edges import gc_policy, malloc_policy
        from edges.log_dirs import LogDirProbe
        from edges.timer import TimerEdge
        from edges.transport import ListenError, Transport
        from zk_bridge.executor import ZkExecutor, ZooKeeperUnreachable, connect

        cfg = self.config
        broker_id = cfg.broker_id
        self._prepare_log_dirs()
        try:
            # a broker whose listeners are all loopback talks to a loopback ZooKeeper only (nothing leaves the machine
            # unless the user configured an address beyond it)
            client = connect(cfg["zookeeper.connect"], cfg["zookeeper.session.timeout.ms"],
                             cfg["zookeeper.connection.timeout.ms"] / 1000.0, allow_remote=not cfg.loopback_only,
                             **zookeeper_security(cfg))
        except ZooKeeperUnreachable as e:
            hint = ("; this broker's listeners are all loopback, so its ZooKeeper must be too: give listeners (or "
                    "advertised.listeners) this host's own address") if cfg.loopback_only else ""
            raise BrokerStartError(f"{e}{hint}") from None
        self._closers.append(lambda: (client.stop(), client.close()))
        cluster_id = get_or_create_cluster_id(client)
        try:
            self._own_log_dirs(cluster_id)
        except BrokerStartError:
            self._close()
            raise
        trace = None
        if self.trace_dir:
            os.makedirs(self.trace_dir, exist_ok=True)
            trace = TraceWriter(new_trace_path(self.trace_dir, broker_id), {
                "process": f"broker-{broker_id}", "broker_id": broker_id, "started_ms": round(time.time() * 1000),
                "config": cfg.non_default(), "kactor": _version()})
        rt = Runtime(f"broker-{broker_id}", trace=trace)
        self.runtime = rt
        first, *more = cfg.listeners
        try:
            transport = Transport(rt, first.host, first.port, listener_name=first.listener_name,
                                  extra_listeners=tuple((ep.host, ep.port, ep.listener_name) for ep in more),
                                  max_request_bytes=cfg["socket.request.max.bytes"],
                                  queued_max_requests=cfg["queued.max.requests"],
                                  cluster_id=cluster_id, auto_create=auto_create_config(cfg),
                                  process_requests=False, client_quotas=client_quotas(cfg),
                                  tls=cfg.listener_tls_contexts(), client_tls=cfg.inter_broker_tls_context(),
                                  sasl=cfg.listener_sasl_configs(), scram_credentials=scram_credentials(client),
                                  client_sasl=cfg.inter_broker_sasl_client())
        except ListenError as e:
            self._close()
            raise BrokerStartError(str(e)) from None
        timer = TimerEdge(rt)
        self._closers[:0] = [transport.close, timer.close]
        try:
            self._closers.append(plug_admin_manager(rt, cfg, transport))
        except ZooKeeperUnreachable as e:
            self._close()
            raise BrokerStartError(str(e)) from None
        metrics = None
        metrics_port = cfg["kactor.metrics.port"]
        if metrics_port:  # 0: no endpoint (the actor still keeps the values, as in a replay)
            from edges.metrics_http import BIND_ADDRESS, MetricsEdge

            try:
                metrics = MetricsEdge(metrics_port)
            except OSError as e:
                self._close()
                raise BrokerStartError(f"cannot serve metrics on {BIND_ADDRESS}:{metrics_port}: "
                                       f"{e.strerror or e}") from None
            self._closers.insert(0, metrics.close)
        executor = ZkExecutor(client)
        plug_auto_topic_creation(cfg, transport, client)
        wire_zk_events(rt, executor)
        log_dirs = LogDirProbe(rt, tuple(cfg.log_dirs))
        self._closers.insert(0, log_dirs.close)
        cleaner = log_cleaner(rt, cfg)
        if cleaner is not None:
            self._closers.insert(0, cleaner.close)
            if metrics is not None:
                metrics.add_gauges("kafka_log", cleaner.gauges)
        rt.edges = Edges(zk=executor, timer=timer, net=transport, metrics=metrics, log_dirs=log_dirs, process=self,
                         log_cleaner=cleaner)
        spawn_broker_actors(rt)
        rt.start_driver()
        if cleaner is not None:
            cleaner.start()
        bound_ports = {ep.listener_name: port for ep, (_, port) in zip(cfg.listeners, transport.bound, strict=True)}
        registration = registration_json(cfg, int(time.time() * 1000), bound_ports)
        for actor, message in startup_inputs(cfg, registration):
            rt.inject(actor, message, names.EDGE_PROCESS)
            if isinstance(message, ReplicaManagerInit):
                # after ReplicaManagerInit is queued: a LogDirFailure never reaches the actor before it
                log_dirs.start()
        # full collections walk only what they have not seen survive (edges/gc_policy.py says why; Kafka runs on G1
        # with a 20 ms pause goal); a replay or a test keeps CPython's default collector
        gc_policy.install()
        # large buffers from a heap that is kept, not fresh mappings (edges/malloc_policy.py: 18x on a 1 MB answer)
        malloc_policy.install()
        return rt

    def request_shutdown(self) -> None:
        if self.runtime is not None:
            self.runtime.inject(names.KAFKA_SERVER, BrokerShutdownRequested(), names.EDGE_PROCESS)

    def install_signal_handlers(self) -> None:
        """LoggingSignalHandler.register (Kafka.main): SIGTERM, SIGINT and SIGHUP are logged as they arrive, then
        ask for the orderly stop; a stop that then waits (on an unreachable ZooKeeper, say) has said why it began."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_stop_signal)
        log.info("Registered signal handlers for %s", ", ".join(s.name.removeprefix("SIG") for s in STOP_SIGNALS))

    def _on_stop_signal(self, signum: int, frame: Any) -> None:
        log.info("Terminating process due to signal %s", signal.Signals(signum).name)
        self.request_shutdown()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def _close(self) -> None:
        for close in self._closers:
            try:
                close()
            except Exception:  # noqa: BLE001 - best effort on the way out
                log.debug("close failed", exc_info=True)
        self._closers.clear()
        if self.runtime is not None:
            self.runtime.shutdown()
            self.runtime = None
        if self._dir_locks is not None:  # the logs are closed: another process may have the dirs now
            self._dir_locks.release()
            self._dir_locks = None

    def run(self) -> int:
        """Start, wait for SIGTERM/SIGINT/SIGHUP, stop in order. Exit code 0 on an orderly stop.

        SIGHUP (the terminal of ``kactor cluster`` closed: the brokers share its process group) is an orderly stop
        too, as for ``kactor cluster`` itself: a controlled shutdown instead of dying with up to a second of trace."""
        skip_test_only_imports()
        self.start()
        self.install_signal_handlers()
        cfg = self.config
        net = self.runtime.edges.net if self.runtime is not None else None
        log.info("broker %d started on %s (bound %s)", cfg.broker_id, ",".join(cfg["listeners"]),
                 ", ".join(f"{h}:{p}" for h, p in getattr(net, "bound", ())))
        while not self._done.wait(0.5):
            pass
        msg = self._shutdown
        log.info("broker %d stopping (%s)", cfg.broker_id, msg.reason if msg else "")
        self._close()
        if msg is not None and msg.error:
            raise BrokerStartError(msg.reason)
        return 0


def log_cleaner(rt: Runtime, cfg: KafkaConfig) -> Any:
    """LogManager's ``cleaner``: a LogCleaner when log.cleaner.enable, with log.cleaner.threads threads (none: no
    compaction, as Kafka)."""
    from core.broker.cleaner.config import CleanerConfig
    from edges.log_cleaner import LogCleanerEdge

    config = CleanerConfig.from_broker_config(cfg.values)
    if not config.enable_cleaner or config.num_threads < 1:
        return None
    return LogCleanerEdge(rt, config, tuple(cfg.log_dirs))


def _replica_manager_init(cfg: KafkaConfig) -> Any:
    from messages.broker_lifecycle import ReplicaManagerInit

    return ReplicaManagerInit.from_kafka_config(cfg)


def auto_create_config(cfg: KafkaConfig) -> Any:
    """The settings the listeners stamp into every Metadata request (KafkaApis reads them from its KafkaConfig)."""
    from messages.metadata import AutoCreateConfig

    return AutoCreateConfig(cfg["auto.create.topics.enable"], cfg["num.partitions"], cfg["default.replication.factor"],
                            cfg["offsets.topic.replication.factor"], cfg["transaction.state.log.replication.factor"])


def client_quotas(cfg: KafkaConfig) -> Any:
    """The listeners' client quota managers (KafkaServer's QuotaFactory.instantiate), from ClientQuotaManagerConfig's
    settings; the quotas themselves arrive from ZooKeeper through the config manager."""
    from core.quota.client_quota_manager import QuotaConfig
    from edges.client_quotas import ClientQuotas

    if cfg["client.quota.callback.class"]:
        log.warning("client.quota.callback.class=%s is a Java class kactor cannot load; the default quota callback "
                    "(2.6's entity resolution) is used", cfg["client.quota.callback.class"])
    return ClientQuotas(QuotaConfig(cfg["quota.producer.default"], cfg["quota.window.num"],
                                    cfg["quota.window.size.seconds"]), cfg["quota.consumer.default"])


def scram_credentials(client: Any) -> Any:
    """The SASL listeners' SCRAM credential lookup: KafkaServer's CredentialProvider cache, filled here from every
    /config/users/<user> before the listeners exist (as DynamicConfigManager.startup does before
    startProcessingRequests), then kept up to date by the config manager from the user change notifications
    (UserCredentialsChanged, through the "net" actor). An authentication never reads ZooKeeper, so SCRAM clients
    and SCRAM inter-broker links keep connecting while it is unreachable."""
    from core.broker.dynamic_config import DEFAULT_ENTITY, USER
    from core.quota.client_quota_manager import desanitize
    from core.security.credential_cache import CredentialCache
    from protocol.zk.znodes import ZnodeDecodeError
    from zk_bridge.admin.admin_zk import AdminZkClient

    admin = AdminZkClient(client)
    cache = CredentialCache()
    for name in admin.get_all_entities_with_config(USER):
        if name == DEFAULT_ENTITY:  # UserConfigHandler: the <default> user's config holds quotas only
            continue
        try:
            cache.update_credentials(desanitize(name), admin.fetch_entity_config(USER, name))
        except ZnodeDecodeError as e:  # the config manager's start-up reads it again and logs it as Kafka does
            log.debug("%s", e)
    return cache


def plug_auto_topic_creation(cfg: KafkaConfig, transport: Any, client: Any) -> None:
    """The "auto_create" edge handler: the ZooKeeper writes a Metadata answer promised (on the broker's session; a
    creation is one transaction, never a wait)."""
    from messages.group import GroupCoordinatorConfig
    from messages.transaction import TransactionCoordinatorConfig
    from zk_bridge.admin.admin_zk import AdminZkClient
    from zk_bridge.admin.auto_topic_creation import AutoTopicCreation

    transport.add_edge_handler("auto_create", AutoTopicCreation(
        AdminZkClient(client), GroupCoordinatorConfig.from_kafka_config(cfg),
        TransactionCoordinatorConfig.from_kafka_config(cfg)).handle)


def startup_inputs(cfg: KafkaConfig, registration: str) -> list[tuple[str, Any]]:
    """The messages a broker's start-up injects, in order (KafkaServer.startup's sequence): a live broker
    (BrokerProcess.start) and a simulated one (kactor/sim_boot.py) start from the same list."""
    return [(names.CONTROLLER, ControllerInit(controller_config(cfg, registration))),
            (names.REPLICA_MANAGER, _replica_manager_init(cfg)),
            (names.CONFIG_MANAGER, config_manager_init(cfg)),
            (names.GROUP_COORDINATOR, group_coordinator_init(cfg)),
            (names.TRANSACTION_COORDINATOR, transaction_coordinator_init(cfg)),
            *authorizer_inputs(cfg),
            (names.KAFKA_SERVER, BrokerStartup(
                cfg.broker_id, registration, cfg["controlled.shutdown.enable"],
                cfg["controlled.shutdown.max.retries"], cfg["controlled.shutdown.retry.backoff.ms"],
                cfg["zookeeper.session.timeout.ms"], cfg.inter_broker_listener_name))]


def authorizer_inputs(cfg: KafkaConfig) -> list[tuple[str, Any]]:
    """With ``authorizer.class.name`` set (AclAuthorizer): the authorizing actors start from an authorizer that
    allows the super users only (no ACL read yet), the config manager loads the ACL cache, which replaces it, and the
    kafka-server waits for that load before the listeners read a request (KafkaServer.startup: the authorizer's start
    futures go to socketServer.startProcessingRequests). A request read before would meet the ACL-less authorizer:
    without super.users the controller's first UpdateMetadata was refused CLUSTER_AUTHORIZATION_FAILED, leaving the
    broker's metadata without brokers."""
    from actors.core_effects import RECONFIGURABLES
    from core.security.authorizer import acl_authorizer_configs, authorizer_enabled
    from messages.security import AclAuthorizerInit, AuthorizerChanged
    from messages.server_startup import AwaitAuthorizer

    if not authorizer_enabled(cfg["authorizer.class.name"]):
        return []
    super_users, allow = acl_authorizer_configs(cfg.originals)
    unloaded = AuthorizerChanged(super_users, False, loaded=False)
    return [*((name, unloaded) for name in RECONFIGURABLES[AuthorizerChanged]),
            (names.KAFKA_SERVER, AwaitAuthorizer()),
            (names.CONFIG_MANAGER, AclAuthorizerInit(super_users, allow))]


def group_coordinator_init(cfg: KafkaConfig) -> Any:
    """The group coordinator's start: GroupCoordinator.startup with the broker's group.* and offsets.* settings (and
    transaction.state.log.*, for FindCoordinator's creation of __transaction_state)."""
    from messages.group import GroupCoordinatorConfig, GroupCoordinatorInit
    from messages.transaction import TransactionCoordinatorConfig

    return GroupCoordinatorInit(cfg.broker_id, GroupCoordinatorConfig.from_kafka_config(cfg),
                                TransactionCoordinatorConfig.from_kafka_config(cfg))


def transaction_coordinator_init(cfg: KafkaConfig) -> Any:
    """The transaction coordinator's start: TransactionCoordinator.startup with the broker's transaction.* settings."""
    from messages.transaction import TransactionCoordinatorConfig, TransactionCoordinatorInit

    return TransactionCoordinatorInit(cfg.broker_id, TransactionCoordinatorConfig.from_kafka_config(cfg),
                                      cfg["offsets.topic.num.partitions"], cfg.inter_broker_listener_name)


def config_manager_init(cfg: KafkaConfig) -> Any:
    """The config manager's start: the broker id and the server.properties values of the dynamic log configs."""
    from messages.dynamic_config import ConfigManagerInit

    static = {**cfg.log_props(), "min.insync.replicas": str(cfg["min.insync.replicas"]),
              "unclean.leader.election.enable": str(cfg["unclean.leader.election.enable"]).lower()}
    return ConfigManagerInit(cfg.broker_id, tuple(static.items()))


def _version() -> str:
    from kactor import __version__

    return __version__
