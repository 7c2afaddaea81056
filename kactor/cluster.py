"""LocalCluster: an embedded real ZooKeeper — one server or an ensemble — (unless one is given) and N broker processes
on loopback, or (``hosts="netns"``) each broker and each ZooKeeper server on a host of its own: a network namespace
with its own address on a private bridge (edges/netns.py), brokers on port 9092 and ZooKeeper on 2181, as on
real machines.

Used by ``kactor cluster``, ``kactor demo``, the benchmarks and the real-cluster tests. A cluster of fewer than 3
brokers gets ``offsets.topic.replication.factor`` and ``transaction.state.log.replication.factor`` = its broker count
(and a single broker ``transaction.state.log.min.isr`` = 1) unless an override sets them, as Kafka's single-broker
``config/server.properties`` sets them to 1: with 2.6's default of 3, ``__consumer_offsets`` and
``__transaction_state`` are created only once 3 brokers are alive, so a smaller cluster would have no consumer groups
and no transactions at all. Every broker and ZooKeeper
is a child started by edges/children.py: the kernel sends it SIGTERM if this process dies (PR_SET_PDEATHSIG), and
the janitor SIGKILLs what lingers and removes the temporary directories, so nothing of a cluster outlives its
launcher, even a SIGKILLed one.

``persistent`` (``kactor cluster --data-dir D``): the base dir is the cluster's and outlives it. The embedded
ZooKeeper keeps its data there beside the brokers' log dirs (``D/zookeeper/server-<myid>``), so the next start on D
is the same cluster — its topics, its /cluster/id that every log dir's meta.properties names — and the dir is locked
(``D/.lock``) while the cluster runs, so a second cluster on D is refused before it starts a ZooKeeper on the first's
data. Logs whose ZooKeeper data is missing are refused too: a new ZooKeeper would serve them under re-created topics.

``zookeeper_sasl`` (``kactor cluster --zookeeper-sasl``): zookeeper.set.acl=true with Kafka's ZooKeeper login, SASL
DIGEST-MD5 from a JAAS Client section: the brokers get the JAAS file in KAFKA_OPTS (ZOOKEEPER_SASL_FILE in the base
dir, user ``kafka``, a fresh password each start: the znodes' ACL names the user only, sasl:kafka) and the embedded
ZooKeeper runs SASLAuthenticationProvider accepting it. Without it, a JAAS Client section that this process's
KAFKA_OPTS names is the brokers' login (they inherit the variable), which the embedded ZooKeeper accepts too.
"""

from __future__ import annotations

import logging
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kazoo.client import KazooClient

from core.security.jaas import JAVA_LOGIN_CONFIG_PARAM, KAFKA_OPTS, ZkSaslLogin, client_jaas_text
from edges.children import janitor, spawn
from edges.log_dirs import LogDirLockError, LogDirLocks
from edges.netns import NetHost, NetnsLayout, NetnsUnavailable
from zk_bridge import blocking
from zk_bridge.server import ZooKeeperEnsemble, free_port

if TYPE_CHECKING:
    from kactor.secure_cluster import SecureLayout

# the trace writer flushes every second (edges/trace_writer.py); an idle broker may write nothing for longer
TRACE_FLUSH_WAIT_S = 3.0
HOSTS = ("loopback", "netns")
BROKER_PORT = 9092  # Kafka's usual port: a broker in a namespace of its own has it to itself
# overrides after which the broker's listener may not be plaintext
RELISTENING = ("listeners=", "listener.security.protocol.map=")


log = logging.getLogger("kactor.cluster")

OFFSETS_TOPIC_RF = "offsets.topic.replication.factor"
OFFSETS_TOPIC_RF_DEFAULT = 3  # Kafka 2.6's default (kactor/config.py)
TXN_TOPIC_RF = "transaction.state.log.replication.factor"  # its default is 3 too
TXN_TOPIC_MIN_ISR = "transaction.state.log.min.isr"
TXN_TOPIC_MIN_ISR_DEFAULT = 2
ZOOKEEPER_DIR = "zookeeper"  # a persistent cluster's ZooKeeper data, beside the brokers' log dirs
# --zookeeper-sasl: the brokers' (and the tools') JAAS file with its Client section, and its user
ZOOKEEPER_SASL_FILE = os.path.join("zookeeper-sasl", "zk_client_jaas.conf")
ZOOKEEPER_SASL_USER = "kafka"


class ClusterError(RuntimeError):
    pass


class BrokerExitedError(ClusterError):
    """A broker exited while a start waited for it (`LocalCluster.raise_if_a_broker_exited`)."""


def small_cluster_overrides(brokers: int, overrides: Iterable[str]) -> list[str]:
    """``overrides``, preceded by what Kafka's single-broker ``config/server.properties`` lowers for a cluster of fewer
    brokers than the defaults need, each unless ``overrides`` set it: offsets.topic.replication.factor and
    transaction.state.log.replication.factor = <brokers>, and transaction.state.log.min.isr = <brokers> below its
    default of 2. (With 2.6's defaults, __consumer_offsets and __transaction_state are created only once 3 brokers
    are alive: a smaller cluster would have no consumer groups and no transactions at all.)"""
    given = list(overrides)
    named = {o.split("=", 1)[0].strip() for o in given}
    lowered = [(key, default) for key, default in ((OFFSETS_TOPIC_RF, OFFSETS_TOPIC_RF_DEFAULT),
                                                   (TXN_TOPIC_RF, OFFSETS_TOPIC_RF_DEFAULT),
                                                   (TXN_TOPIC_MIN_ISR, TXN_TOPIC_MIN_ISR_DEFAULT))
               if brokers < default and key not in named]
    for key, default in lowered:
        log.warning("%s=%d for a cluster of %d broker%s (Kafka's default, %d, needs %d brokers alive)", key, brokers,
                    brokers, "" if brokers == 1 else "s", default, default)
    return [*(f"{key}={brokers}" for key, _ in lowered), *given]


class LocalCluster:
    """Start / stop / kill brokers of a local cluster; poll ZooKeeper for the states tests wait on."""

    def __init__(self, brokers: int = 3, zookeeper: str | None = None, base_dir: str | None = None,
                 trace_dir: str | None = None, overrides: Iterable[str] = (), zk_tick_ms: int = 2000,
                 log_level: str = "INFO", zookeeper_ensemble: int = 1,
                 zk_max_session_timeout_ms: int | None = None, hosts: str = "loopback",
                 ports: Mapping[int, int] | None = None, metrics_ports: Mapping[int, int] | None = None,
                 security: str = "plaintext", persistent: bool = False, zookeeper_sasl: bool = False) -> None:
        if brokers < 1:
            raise ClusterError("--brokers must be at least 1")
        if zookeeper_ensemble < 1:
            raise ClusterError("--zookeeper-ensemble must be at least 1")
        if hosts not in HOSTS:
            raise ClusterError(f"--hosts must be one of {', '.join(HOSTS)}, not {hosts!r}")
        if hosts == "netns" and zookeeper:
            raise ClusterError("--hosts netns runs its own ZooKeeper in namespaces: --zookeeper cannot be given "
                               "(a ZooKeeper on this machine's loopback is out of the namespaces' reach)")
        self.hosts = hosts
        # hosts="netns": the namespaces, created by start() and removed by stop()
        self.layout: NetnsLayout | None = None
        self.n = brokers
        self.given_zookeeper = zookeeper
        self.zookeeper_ensemble = zookeeper_ensemble
        self.zk_max_session_timeout_ms = zk_max_session_timeout_ms
        if persistent and base_dir is None:
            raise ClusterError("a persistent cluster needs a base dir of its own (--data-dir)")
        self.persistent = persistent
        self._base_lock: LogDirLocks | None = None
        self._own_base = base_dir is None
        self.base_dir = base_dir or tempfile.mkdtemp(prefix="kactor-cluster-")
        if self._own_base:  # removed by stop(), or by the janitor if we die first
            janitor().watch_dir(self.base_dir)
        self.trace_dir = trace_dir
        # a persistent cluster's ZooKeeper data dirs, found (and the base dir locked) before anything is written there
        self.zk_data_dirs = self._claim_base_dir() if persistent else None
        # security (kactor cluster --security): the brokers' one listener and the files that secure it, in the
        # base dir (removed with it); the caller's overrides come after the layout's and win
        self.secure: SecureLayout | None = None
        self.listener_name = "PLAINTEXT"
        if security != "plaintext":
            if hosts == "netns":
                self._release_base_dir()
                raise ClusterError("--security is for --hosts loopback: the certificate names 127.0.0.1 and localhost")
            from kactor.secure_cluster import make_layout  # cryptography, only for a secured cluster

            try:
                self.secure = make_layout(security, Path(self.base_dir) / "security", ["127.0.0.1", "localhost"])
            except ValueError as e:
                self._release_base_dir()
                raise ClusterError(str(e)) from None
            self.listener_name = self.secure.listener_name
            overrides = [*self.secure.overrides, *overrides]
        # ZooKeeper SASL: the brokers' login (a JAAS Client section, as Kafka's), which the embedded ZooKeeper accepts
        self.broker_env: dict[str, str] = {}
        try:
            self.zookeeper_sasl = self._zookeeper_sasl_login(zookeeper_sasl)
        except ClusterError:
            self._release_base_dir()
            raise
        if zookeeper_sasl:
            overrides = ["zookeeper.set.acl=true", *overrides]
        self.overrides = small_cluster_overrides(brokers, overrides)
        self.zk_tick_ms = zk_tick_ms
        self.log_level = log_level
        # The embedded ZooKeeper: one server (an ensemble of 1) or a quorum of zookeeper_ensemble servers.
        self.zk: ZooKeeperEnsemble | None = None
        # broker id → its listener's port: chosen by the caller, else a free one at the broker's first start
        self.ports: dict[int, int] = dict(ports or {})
        # broker id → its Prometheus endpoint's port (kactor.metrics.port), kept across restarts like ``ports``
        self.metrics_ports: dict[int, int] = dict(metrics_ports or {})
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        # the brokers a start restarted once for giving up on its ZooKeeper (`restart_brokers_that_gave_up`)
        self._gave_up_restarted: set[int] = set()
        self.logs: dict[int, str] = {}

    @property
    def connect_string(self) -> str:
        if self.given_zookeeper:
            return self.given_zookeeper
        assert self.zk is not None
        return self.zk.connect_string

    def start(self) -> LocalCluster:
        zk_hosts: list[NetHost] = []
        if self.hosts == "netns":
            zk_names = [f"zk-{i + 1}" for i in range(self.zookeeper_ensemble)]
            try:
                self.layout = NetnsLayout([*zk_names, *(f"broker-{b}" for b in range(self.n))]).create()
            except NetnsUnavailable as e:
                raise ClusterError(str(e)) from None
            zk_hosts = [self.layout.host(name) for name in zk_names]
        if not self.given_zookeeper:
            login = self.zookeeper_sasl
            self.zk = ZooKeeperEnsemble(self.zookeeper_ensemble, tick_ms=self.zk_tick_ms,
                                        max_session_timeout_ms=self.zk_max_session_timeout_ms, netns=zk_hosts,
                                        data_dirs=self.zk_data_dirs,
                                        sasl_users={login.username: login.password} if login else None)
            # The brokers start while the JVMs do (issue #41): a broker spends its first second of CPU on imports,
            # then connects as Kafka's does, retrying until zookeeper.connection.timeout.ms
            # (zk_bridge.executor.connect), so it finds ZooKeeper serving or about to.
            self.zk.launch()
        self._gave_up_restarted.clear()
        try:
            for broker_id in range(self.n):
                self.start_broker(broker_id)
            if self.zk is not None:
                self.zk.wait_started()
                self._restart_early_exits()
        except BaseException:
            self._kill_started_brokers()
            if self.zk is not None:
                self.zk.stop()
                self.zk = None
            raise
        return self

    def _restart_early_exits(self) -> None:
        """Once the embedded ZooKeeper serves: start again every broker that exited before it did, one that gave
        up waiting for it (zookeeper.connection.timeout.ms, as Kafka's broker gives up) while its JVM was slow to
        start on a loaded machine. Its log keeps the first run's last line."""
        for broker_id, proc in sorted(self.procs.items()):
            if proc.poll() is not None:
                log.warning("broker %d exited (code %s) before ZooKeeper served: starting it again", broker_id,
                            proc.returncode)
                self.start_broker(broker_id)

    def _kill_started_brokers(self) -> None:
        """A start that failed (no ZooKeeper came up): its brokers never registered, so there is nothing to stop in
        order; SIGKILL, so that none of them waits out its ZooKeeper connection timeout."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def _zookeeper_sasl_login(self, generate: bool) -> ZkSaslLogin | None:
        """The brokers' ZooKeeper SASL login. ``generate`` (kactor cluster --zookeeper-sasl): user ``kafka`` with a
        fresh password, in a JAAS file of the base dir (ZOOKEEPER_SASL_FILE, the owner's only) that the brokers are
        given as Kafka's are, ``KAFKA_OPTS=-Djava.security.auth.login.config=<file>``, and that Kafka's tools and
        zkCli.sh can be given too. Otherwise the login of this process's KAFKA_OPTS, which the brokers inherit, if it
        names a JAAS Client section. The embedded ZooKeeper accepts the login (SASLAuthenticationProvider)."""
        from kactor.config import ConfigError, zookeeper_sasl_from_environment

        try:
            inherited = zookeeper_sasl_from_environment()
        except ConfigError as e:
            raise ClusterError(str(e)) from None
        if not generate:
            return inherited
        if self.given_zookeeper:
            raise ClusterError("--zookeeper-sasl sets up the embedded ZooKeeper's SASL: with --zookeeper, name a JAAS "
                               "file whose Client section that ZooKeeper accepts in KAFKA_OPTS="
                               f"-D{JAVA_LOGIN_CONFIG_PARAM}=<file> instead")
        if inherited is not None:
            raise ClusterError(f"--zookeeper-sasl makes the brokers' ZooKeeper login, but KAFKA_OPTS already names "
                               f"one ({inherited.path}): give one or the other")
        path = os.path.join(os.path.abspath(self.base_dir), ZOOKEEPER_SASL_FILE)
        login = ZkSaslLogin(ZOOKEEPER_SASL_USER, secrets.token_urlsafe(18), path=path)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
            f.write(client_jaas_text(login))
        self.broker_env = {KAFKA_OPTS: self.kafka_opts(path)}
        return login

    @staticmethod
    def kafka_opts(jaas_path: str) -> str:
        """This process's KAFKA_OPTS with the JAAS file ``jaas_path`` named in it, as Kafka's scripts take it."""
        return " ".join(filter(None, (os.environ.get(KAFKA_OPTS, "").strip(),
                                      f"-D{JAVA_LOGIN_CONFIG_PARAM}={shlex.quote(jaas_path)}")))

    def _claim_base_dir(self) -> list[str] | None:
        """A persistent cluster's start: lock the base dir for this cluster's life, then find its ZooKeeper's data
        dirs (None with a ZooKeeper given: that one is the cluster's). ClusterError, saying why and what to do,
        when another cluster runs on the dir, or when the logs there cannot be this ZooKeeper's."""
        base = os.path.abspath(self.base_dir)
        os.makedirs(base, exist_ok=True)
        try:
            self._base_lock = LogDirLocks((base,)).acquire()
        except LogDirLockError:
            raise ClusterError(f"--data-dir {base} is in use: another kactor cluster running on it holds "
                               f"{os.path.join(base, '.lock')}. Stop that cluster first, or give another "
                               "--data-dir") from None
        except OSError as e:
            raise ClusterError(f"--data-dir {base} is not usable: {e.strerror or e}") from None
        if self.given_zookeeper:
            return None
        zk_root = os.path.join(base, ZOOKEEPER_DIR)
        try:
            held = sorted(n for n in os.listdir(zk_root) if n.startswith("server-"))
        except FileNotFoundError:
            held = []
        if not held:
            logs = self._log_dirs_with_data(base)
            if logs:
                self._release_base_dir()
                raise ClusterError(
                    f"--data-dir {base} holds broker log dirs ({', '.join(logs)}) but no ZooKeeper data ({zk_root}): "
                    "the ZooKeeper that knew their topics was not kept there (a kactor that kept none, or "
                    "--zookeeper), and a new one would serve their old records under re-created topics. Give that "
                    f"cluster's --zookeeper, remove those dirs (or all of {base}) to start an empty cluster there, "
                    "or give another --data-dir")
        elif len(held) != self.zookeeper_ensemble:
            self._release_base_dir()
            raise ClusterError(f"{zk_root} holds the data of a ZooKeeper ensemble of {len(held)} server(s): run "
                               f"with --zookeeper-ensemble {len(held)} to start that cluster again, or give another "
                               "--data-dir")
        return [os.path.join(zk_root, f"server-{i + 1}") for i in range(self.zookeeper_ensemble)]

    @staticmethod
    def _log_dirs_with_data(base: str) -> list[str]:
        """The ``broker-<id>`` log dirs under ``base`` that hold anything but a lock file."""
        out = []
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if name.startswith("broker-") and os.path.isdir(path) and set(os.listdir(path)) - {".lock"}:
                out.append(name)
        return out

    def _release_base_dir(self) -> None:
        if self._base_lock is not None:
            self._base_lock.release()
            self._base_lock = None

    def broker_host(self, broker_id: int) -> NetHost | None:
        """The namespace host of broker ``broker_id`` (hosts="netns"), None on loopback."""
        if self.layout is None:
            return None
        try:
            return self.layout.host(f"broker-{broker_id}")
        except KeyError:
            raise ClusterError(f"broker {broker_id} has no namespace: --hosts netns made hosts for brokers "
                               f"0..{self.n - 1}") from None

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        """Where broker ``broker_id`` listens (its one listener, ``listener_name``, unless an override changed it)."""
        host = self.broker_host(broker_id)
        if host is not None:
            return host.address, self.ports.setdefault(broker_id, BROKER_PORT)
        return "127.0.0.1", self.ports.setdefault(broker_id, free_port())

    def broker_args(self, broker_id: int) -> list[str]:
        host, port = self.broker_address(broker_id)
        args = [sys.executable, "-m", "kactor", "broker", "--log-level", self.log_level,
                "--override", f"broker.id={broker_id}",
                "--override", f"zookeeper.connect={self.connect_string}",
                "--override", f"listeners={self.listener_name}://{host}:{port}",
                "--override", f"log.dirs={os.path.join(self.base_dir, f'broker-{broker_id}')}"]
        if self.layout is None:
            # the metrics endpoint binds loopback: inside a namespace nobody outside it could scrape it, so off there
            metrics_port = self.metrics_ports.setdefault(broker_id, free_port())
            args += ["--override", f"kactor.metrics.port={metrics_port}"]
        if self.trace_dir:
            args += ["--trace-dir", self.trace_dir]
        for o in self.overrides:
            args += ["--override", o]
        ns = self.broker_host(broker_id)
        return args if ns is None else ns.command(args)

    def restart_command(self, broker_id: int) -> str:
        """The shell command that starts broker ``broker_id`` again as this cluster started it (same id, listener,
        metrics port, log dir and overrides): what a user runs to bring back one broker that died."""
        args = self.broker_args(broker_id)
        env = "".join(f"{key}={shlex.quote(value)} " for key, value in self.broker_env.items())
        if self.layout is None and args[:3] == [sys.executable, "-m", "kactor"]:
            return env + shlex.join(["kactor", *args[3:]])
        return env + shlex.join(args)

    def start_broker(self, broker_id: int) -> subprocess.Popen[bytes]:
        if broker_id in self.procs and self.procs[broker_id].poll() is None:
            raise ClusterError(f"broker {broker_id} is already running")
        log_path = os.path.join(self.base_dir, f"broker-{broker_id}.log")
        self.logs[broker_id] = log_path
        os.makedirs(self.base_dir, exist_ok=True)
        with open(log_path, "ab") as out:
            # A session of its own, as the embedded ZooKeeper's: a terminal's Ctrl-C or hang-up reaches the launcher
            # alone, which stops the brokers one at a time, the controller last (stop()). Signalled with it, every
            # broker's controlled shutdown asked a controller that was itself going away; and a launcher started
            # with SIGINT ignored (a script's background job) kept running while its brokers stopped. A broker
            # still dies with its launcher (edges/children.py: PR_SET_PDEATHSIG and the janitor).
            proc = spawn(self.broker_args(broker_id), stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONHASHSEED="0", **self.broker_env),
                         start_new_session=True)
        self.procs[broker_id] = proc
        return proc

    def signal_broker(self, broker_id: int, sig: int) -> None:
        proc = self.procs[broker_id]
        if proc.poll() is None:
            proc.send_signal(sig)

    def kill_broker(self, broker_id: int, wait_trace_flush: bool = False) -> None:
        """SIGKILL: a crash. Its ZooKeeper session expires after zookeeper.session.timeout.ms.

        ``wait_trace_flush``: with tracing on, first wait (at most TRACE_FLUSH_WAIT_S) until the broker's trace writer
        has written once more. It writes every second and a SIGKILL loses what it had not written; the replay of the
        broker's next incarnation rebuilds the log dirs from this incarnation's trace (kactor/trace/replay.py
        replay_chain), so records or leader-epoch entries appended in the lost second would be missing there and the
        replay would diverge (a follower's truncate-or-fetch decision reads its leader-epoch cache)."""
        if wait_trace_flush and self.trace_dir and self.procs[broker_id].poll() is None:
            self._wait_trace_written(broker_id)
        self.signal_broker(broker_id, signal.SIGKILL)
        self.procs[broker_id].wait()

    def _wait_trace_written(self, broker_id: int) -> None:
        from kactor.trace.reader import TraceError, trace_files_for_broker

        assert self.trace_dir is not None
        since = time.time()
        deadline = time.monotonic() + TRACE_FLUSH_WAIT_S
        while time.monotonic() < deadline:
            try:
                newest = trace_files_for_broker(self.trace_dir, broker_id)[-1]
                if os.stat(newest).st_mtime > since:
                    return
            except (TraceError, OSError):  # not opened yet
                pass
            time.sleep(0.05)

    def stop_broker(self, broker_id: int, timeout: float = 60.0, sig: int = signal.SIGTERM) -> int:
        """SIGTERM (or SIGHUP/SIGINT, the same to a broker): an orderly stop (controlled shutdown); the exit code."""
        proc = self.procs[broker_id]
        if proc.poll() is None:
            proc.send_signal(sig)
            self._wait_exit(broker_id, timeout)
        return proc.returncode

    def _wait_exit(self, broker_id: int, timeout: float) -> None:
        """Wait for a signalled broker to exit; SIGKILL it after ``timeout``."""
        proc = self.procs[broker_id]
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def stop(self, concurrent: bool = False) -> None:
        """Stop every broker in order, the controller's last, then ZooKeeper.

        One at a time, as an operator rolls a cluster: stopped all at once, each broker's controlled shutdown asks a
        controller that is itself going away and retries until controlled.shutdown.max.retries runs out (30–40 s).
        The brokers run in sessions of their own (start_broker), so a terminal's Ctrl-C does not stop them all at
        once behind this method's back: ``kactor cluster`` gets it and calls this.
        ``concurrent`` (a test's teardown): the brokers other than the controller together, then the controller; a
        leadership none of the stopping brokers can take stays where it is, and their shutdowns overlap.
        """
        live = [b for b, p in self.procs.items() if p.poll() is None]
        for b in live:
            self.procs[b].send_signal(signal.SIGCONT)  # a SIGSTOPped broker cannot act on SIGTERM
        controller = self._controller_or_none()
        if concurrent:
            others = [b for b in live if b != controller]
            for b in others:
                self.procs[b].send_signal(signal.SIGTERM)
            for b in others:
                self._wait_exit(b, timeout=30.0)
            live = [b for b in live if b == controller]
        for b in sorted(live, key=lambda b: (b == controller, b)):
            self.stop_broker(b, timeout=30.0)
        if self.zk is not None:
            self.zk.stop()
            self.zk = None
        if self.layout is not None:
            self.layout.remove()
            self.layout = None
        if self._own_base:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            janitor().forget_dir(self.base_dir)
        self._release_base_dir()  # ZooKeeper and every broker are gone: the dir may have another cluster now

    def _controller_or_none(self) -> int | None:
        try:
            zk = KazooClient(hosts=self.connect_string, timeout=2.0)
            zk.start(timeout=3)
        except Exception:  # noqa: BLE001 - ZooKeeper already gone: any order will do
            return None
        try:
            return self.controller_id(zk)
        except Exception:  # noqa: BLE001
            return None
        finally:
            zk.stop()
            zk.close()

    def metrics_url(self, broker_id: int) -> str:
        """Where broker ``broker_id`` serves its Prometheus metrics (unless an override changed the port)."""
        if broker_id not in self.metrics_ports:
            raise ClusterError(f"broker {broker_id} serves no metrics reachable from here (--hosts netns turns the "
                               "loopback-bound endpoint off)")
        return f"http://127.0.0.1:{self.metrics_ports[broker_id]}/metrics"

    def pids(self) -> list[int]:
        out = [p.pid for p in self.procs.values() if p.poll() is None]
        if self.zk is not None:
            out += self.zk.pids()
        return out

    def log_tail(self, broker_id: int, limit: int = 3000) -> str:
        try:
            with open(self.logs[broker_id], encoding="utf-8", errors="replace") as f:
                return f.read()[-limit:]
        except (OSError, KeyError):
            return ""

    # -- polling helpers ------------------------------------------------------------------------------------------
    def client(self) -> KazooClient:
        c = KazooClient(hosts=self.connect_string, timeout=5.0)
        c.start(timeout=10)
        return c

    def wait_for(self, predicate, timeout: float, what: str, interval: float = 0.05):  # type: ignore[no-untyped-def]
        """Poll ``predicate()`` until it returns a truthy value; ClusterError naming ``what`` on timeout."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = predicate()
                if value:
                    return value
            except ClusterError:  # the predicate's verdict: waiting longer cannot help
                raise
            except Exception as e:  # noqa: BLE001 - polling through transient states
                last_error = e
            time.sleep(interval)
        raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}"
                           + (f" (last error: {last_error})" if last_error else ""))

    def raise_if_a_broker_exited(self) -> None:
        """During start-up: a broker that exited will not register (a log dir of another cluster, a port taken...):
        BrokerExitedError with the last line it wrote, rather than a wait until the timeout."""
        for broker_id, proc in sorted(self.procs.items()):
            if proc.poll() is not None:
                raise BrokerExitedError(f"broker {broker_id} exited with {proc.returncode} during start-up"
                                   + (f": {line}" if (line := self._last_line(broker_id)) else "")
                                   + f" (its log: {self.logs[broker_id]})")

    def _last_line(self, broker_id: int) -> str:
        lines = self.log_tail(broker_id, 2000).strip().splitlines()
        return lines[-1] if lines else ""

    def restart_brokers_that_gave_up(self) -> None:
        """During start-up (a registration wait calls it as it polls): start again, once a start, each broker that
        exited because the embedded ZooKeeper was not serving within its zookeeper.connection.timeout.ms
        (`_restart_early_exits`' case, when its deadline fell just after that check)."""
        from zk_bridge.executor import UNREACHABLE

        if self.zk is None:
            return  # the user's ZooKeeper: out of reach is the answer
        restarted = self._gave_up_restarted
        for broker_id, proc in sorted(self.procs.items()):
            if proc.poll() is not None and broker_id not in restarted and UNREACHABLE in self._last_line(broker_id):
                log.warning("broker %d gave up waiting for ZooKeeper as it began serving: starting it again",
                            broker_id)
                restarted.add(broker_id)
                self.start_broker(broker_id)

    def wait_registered(self, zk: KazooClient, timeout: float) -> None:
        """Wait until every started broker holds its /brokers/ids znode.

        A broker that gave up on the embedded ZooKeeper (zookeeper.connection.timeout.ms) is started again once, as
        `_restart_early_exits` does for one that exited before ZooKeeper served: its deadline may fall in the second
        after the JVM began serving, too late for that check (the trace-overhead bench's two clusters starting on a
        loaded machine: broker 0 gave up at 18 s, brokers 1 and 2, started after it, registered). Any other exit ends
        the wait at once (`raise_if_a_broker_exited`). On timeout the error names the brokers missing and the last
        line each wrote, which is what tells a slow start from a stuck one."""
        from protocol.zk import paths

        want = set(self.procs)

        def registered() -> bool:
            self.restart_brokers_that_gave_up()
            self.raise_if_a_broker_exited()
            return {int(b) for b in zk.get_children(paths.BrokerIdsZNode)} >= want

        try:
            self.wait_for(registered, timeout, f"{len(want)} brokers to register")
        except BrokerExitedError:
            raise
        except ClusterError as e:  # the wait's timeout
            registered_ids = {int(b) for b in zk.get_children(paths.BrokerIdsZNode)}
            tails = [f"broker {b}: {self._last_line(b) or '(its log is empty)'}" for b in sorted(want - registered_ids)]
            raise ClusterError(f"{e}; registered {sorted(registered_ids)}; the last line of each missing one's log: "
                               + "; ".join(tails)) from None

    def metadata_complete(self) -> bool:
        """Whether every running broker answers Metadata with every running broker and a controller: the
        controller's UpdateMetadata has reached each one. Until it has, a broker answers with no brokers and no
        controller (as Kafka's MetadataCache does), and librdkafka's admin client, told so by its bootstrap broker,
        waits for a controller until its request times out. Only a plaintext listener is asked (the check speaks no
        TLS or SASL): on a secured one this says True."""
        if self.listener_name != "PLAINTEXT" or any(o.startswith(RELISTENING) for o in self.overrides):
            return True
        from kactor.cli import kafka_wire  # the shell's Kafka requests; only for this check

        running = {b for b, p in self.procs.items() if p.poll() is None}
        for b in running:
            answer = kafka_wire.exchange(self.broker_address(b), *kafka_wire.METADATA,
                                         kafka_wire.NO_TOPICS, timeout_s=5.0)
            if answer["controller_id"] < 0 or {n["node_id"] for n in answer["brokers"]} != running:
                return False
        return True

    def controller_id(self, zk: KazooClient) -> int | None:
        """The active controller's broker id (KafkaZkClient.getControllerId), None if there is none."""
        return blocking.controller_id(zk)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
