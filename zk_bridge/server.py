"""Real ZooKeeper servers (Debian's 3.8 jar) run as child JVMs, for tests, `kactor zookeeper` and `kactor cluster`:
one standalone server (EmbeddedZooKeeper) or an ensemble of them forming a quorum on loopback (ZooKeeperEnsemble).

Why a plain ``java -cp`` and not ``zkServer.sh``: the Debian script forces its own log dir, has no SLF4J binding (so no
server log at all) and turns on JMX. The config form (not ``ZooKeeperServerMain <port> <dir>``) is used because only
it honours ``clientPortAddress``: without it ZooKeeper binds every interface, and we must stay on loopback.

The JVM starts from a class-data archive of the classes a ZooKeeper server loads (AppCDS, JDK 13+: `class_archive`),
which the first server stopped in order on the machine writes (-XX:ArchiveClassesAtExit) and every later one maps
(-XX:SharedArchiveFile): the server's start to ``ruok`` took 0.65 s instead of 0.95 s, 0.45 s of CPU instead of 0.7
(issue #41). It is the same server: the archive holds Debian's jars' classes as loaded, and a JVM that finds it stale
or unreadable loads them from the jars as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType

import attrs

from core.security.jaas import JAVA_LOGIN_CONFIG_PARAM, server_jaas_text
from edges.children import install_stop_signals, janitor, spawn
from edges.netns import NetHost

# Debian's package locations (zookeeper.jar's manifest Class-Path pulls in its other jars; it lacks an SLF4J binding).
ZOOKEEPER_JAR = "/usr/share/java/zookeeper.jar"
LOG_JARS = ("/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar")
INSTALL_HINT = "apt-get install -y zookeeper default-jre-headless"
SASL_AUTH_PROVIDER = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
SERVER_JAAS_FILE = "zk_server_jaas.conf"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# ZooKeeper's usual ports: a server in a network namespace of its own has them all to itself
CLIENT_PORT, QUORUM_PORT, ELECTION_PORT = 2181, 2888, 3888
# the class-data archive's folder under the user's cache ($XDG_CACHE_HOME, else ~/.cache), as pip keeps its wheels
CACHE_DIR = "kactor"
CLASS_ARCHIVE_ENV = "KACTOR_ZOOKEEPER_CDS"  # "0": no class-data archive, neither read nor written
SIGTERM_EXIT = 143  # a JVM that ran its shutdown hooks on SIGTERM (and wrote its class-data archive) exits 128 + 15

_LOG4J = (
    "log4j.rootLogger=WARN, CONSOLE\n"
    "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %m%n\n"
)


class ZooKeeperUnavailable(RuntimeError):  # noqa: N818 - the name others import
    """ZooKeeper cannot be started here (missing java or jar, port taken, server died); the message is one line."""


class PortInUse(ZooKeeperUnavailable):
    """The client port is taken by another process."""


# how many ports a server tries when the one it chose itself is taken before the JVM binds it
PORT_ATTEMPTS = 5


def check_prerequisites() -> str:
    """Return the java executable to use, or raise ZooKeeperUnavailable saying what to install."""
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperUnavailable(f"java not found on PATH: {INSTALL_HINT}")
    if not os.path.isfile(ZOOKEEPER_JAR):
        raise ZooKeeperUnavailable(f"{ZOOKEEPER_JAR} not found: {INSTALL_HINT}")
    return java


def class_archive(java: str) -> str | None:
    """Where this machine's class-data archive of a ZooKeeper server run by ``java`` is (it may not exist yet), or
    None when there is none to use (no cache folder, or KACTOR_ZOOKEEPER_CDS=0).

    Its name is a digest of the JVM's files and the classpath's jars (path, size, modification time), so a JVM or a
    ZooKeeper package upgraded gets an archive of its own instead of one the JVM would refuse as stale."""
    if os.environ.get(CLASS_ARCHIVE_ENV, "1") == "0":
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(cache):  # no home to expand "~" into
        return None
    real = os.path.realpath(java)
    files = [real, os.path.join(os.path.dirname(os.path.dirname(real)), "lib", "server", "libjvm.so"),
             ZOOKEEPER_JAR, *LOG_JARS]
    digest = hashlib.sha256()
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        digest.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return os.path.join(cache, CACHE_DIR, f"zookeeper-{digest.hexdigest()[:16]}.jsa")


def class_archive_flags(archive: str | None, dump_to: str) -> list[str]:
    """The JVM flags that map ``archive`` when it exists, else write one to ``dump_to`` as the JVM exits (the caller
    moves it into place). -XX:+IgnoreUnrecognizedVMOptions first: a JVM before 13 knows no ArchiveClassesAtExit and
    would otherwise refuse to start."""
    if archive is None:
        return []
    if os.path.isfile(archive):
        return ["-XX:+IgnoreUnrecognizedVMOptions", f"-XX:SharedArchiveFile={archive}"]
    return ["-XX:+IgnoreUnrecognizedVMOptions", f"-XX:ArchiveClassesAtExit={dump_to}"]


def keep_class_archive(written: str, archive: str) -> None:
    """Move the archive a JVM wrote at its exit into place, atomically: servers stopped at once each write one and
    the last replace wins, every one of them whole. A folder that cannot be written leaves the next JVM without."""
    part = f"{archive}.{os.getpid()}.part"
    try:
        os.makedirs(os.path.dirname(archive), exist_ok=True)
        shutil.copyfile(written, part)
        os.replace(part, archive)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(part)


_handed_out: set[tuple[str, int]] = set()
_handed_out_lock = threading.Lock()
_port_draws = random.Random()  # its own generator: a seeded global random (a test's, the simulator's) stays as it was
EPHEMERAL_PORTS_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
# below the ephemeral range, as many ports as this: enough that two processes rarely draw the same one
FREE_PORT_SPAN = 16384
LOWEST_FREE_PORT = 1024  # never a privileged port


def _ephemeral_low(path: str = EPHEMERAL_PORTS_FILE) -> int | None:
    """The lowest port the kernel gives a connecting socket or a bind to port 0 (Linux), or None if unknown."""
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _probe(host: str, port: int) -> int | None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return None
        return int(s.getsockname()[1])


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now, and never one this process handed out before.

    The caller binds it later (a broker's or ZooKeeper's process, once started), so the probe socket is closed in
    between and another socket may take the port first. The kernel hands its ephemeral range to every connecting
    socket and every bind to port 0, and a cluster's own clients connect by the hundred while its brokers start: a
    broker once failed "Address already in use" on the port drawn for it. So the port is drawn at random from the
    span just below that range, which only another caller choosing a port by number can take; bind to port 0 only
    where there is no such span.
    """
    low = _ephemeral_low()
    with _handed_out_lock:
        for _ in range(100):
            if low is not None and low - LOWEST_FREE_PORT > 1:
                port = _probe(host, _port_draws.randrange(max(LOWEST_FREE_PORT, low - FREE_PORT_SPAN), low))
            else:
                port = _probe(host, 0)
            if port is not None and (host, port) not in _handed_out:
                _handed_out.add((host, port))
                return port
    raise OSError(f"no fresh free port on {host} after 100 tries")


def port_in_use(host: str, port: int) -> bool:
    """True if something listens on host:port. SO_REUSEADDR so a TIME_WAIT leftover does not count as "in use"
    (ZooKeeper itself binds with SO_REUSEADDR); on Linux a live listener still makes the bind fail."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def four_letter(host: str, port: int, cmd: str = "ruok", timeout: float = 1.0) -> str:
    """Send a ZooKeeper four-letter word (ruok, srvr, mntr, cons...) and return the whole answer as text."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(cmd.encode("ascii"))
        chunks: list[bytes] = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def _check_loopback(bind: str) -> None:
    try:
        loopback = ipaddress.ip_address(bind).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"ZooKeeper must bind a loopback address, not {bind!r}")


@attrs.frozen
class QuorumPeer:
    """An ensemble member as every member's zoo.cfg lists it: ``server.<myid>=host:quorum_port:election_port``."""

    myid: int
    client_port: int
    quorum_port: int
    election_port: int
    host: str = "127.0.0.1"


class EmbeddedZooKeeper:
    """One ZooKeeper server process bound to loopback: standalone, or a member of an ensemble (``peers`` given).
    With ``netns`` it runs in that host's network namespace instead, bound to the host's address (port 2181 unless
    given): edges/netns.py.

    ``data_dir`` given → it is used and kept; otherwise a temporary one is created and removed by stop().
    The config and server log always live in a private temporary directory that stop() removes; kill() keeps both, so
    restart() brings the same server (same myid, same data) back. The JVM dies with this process, even if it is
    SIGKILLed (edges/children.py).

    ``sasl_users`` (user → password): the server runs SASLAuthenticationProvider and accepts these DIGEST-MD5
    logins, from a JAAS Server section written into its private directory and named to its JVM with
    -Djava.security.auth.login.config (as Kafka's docs secure ZooKeeper for zookeeper.set.acl); a client logged in
    is the identity sasl:<user>. Clients without a login still connect, as they may to any ZooKeeper.
    """

    def __init__(self, port: int | None = None, data_dir: str | None = None, tick_ms: int = 2000,
                 bind: str = "127.0.0.1", myid: int | None = None, peers: tuple[QuorumPeer, ...] = (),
                 max_session_timeout_ms: int | None = None, netns: NetHost | None = None,
                 sasl_users: Mapping[str, str] | None = None) -> None:
        self.netns = netns
        if netns is not None:  # its own namespace on kactor's private bridge: nothing else binds there
            bind = netns.address
            port = CLIENT_PORT if port is None else port
        else:
            _check_loopback(bind)
        self.host = bind
        # A port the OS offered us may be taken by any other process before the JVM binds it (a broker's listener
        # on port 0, another test's server): launch() then takes another (and start(), if the JVM lost the race). A
        # port the user named is kept.
        self.port_chosen = port is None
        self.port = port if port is not None else free_port(bind)
        self.tick_ms = tick_ms
        self.user_data_dir = data_dir
        self.myid = myid
        self.peers = peers
        self.max_session_timeout_ms = max_session_timeout_ms
        # user → password: SASL (DIGEST-MD5) logins this server accepts, none when empty (see _write_config)
        self.sasl_users = dict(sasl_users or {})
        self.work_dir: str | None = None
        self.data_dir: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None
        self._lock = threading.Lock()
        # (what the JVM writes at its exit, where the machine's archive goes): set while this JVM writes one
        self._archive_dump: tuple[str, str] | None = None

    # -- properties -----------------------------------------------------------------------------------------------
    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def mode(self) -> str | None:
        """What ``srvr`` says this server is: "leader", "follower", "standalone"; None while it does not serve."""
        with contextlib.suppress(OSError):
            for line in four_letter(self.host, self.port, "srvr", 0.5).splitlines():
                if line.startswith("Mode:"):
                    return line.split(":", 1)[1].strip()
        return None

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the server's console log (empty once stop() removed it)."""
        if self.work_dir is None:
            return ""
        try:
            with open(os.path.join(self.work_dir, "zk.out"), encoding="utf-8", errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> EmbeddedZooKeeper:
        """Launch the JVM and return once ``ruok`` answers ``imok`` and ``srvr`` reports a serving mode."""
        if self.proc is not None:
            raise RuntimeError("this EmbeddedZooKeeper was already started")
        t0 = time.monotonic()
        for attempt in range(PORT_ATTEMPTS):
            try:
                self.launch()
                self.wait_ready(t0 + timeout)
                break
            except PortInUse:
                if not self.port_chosen or attempt == PORT_ATTEMPTS - 1:
                    raise
                self.proc = None
                if not self._take_another_port():
                    raise
        self.startup_s = time.monotonic() - t0
        return self

    def launch(self) -> None:
        """Start the JVM without waiting (an ensemble member cannot serve before a quorum of its peers runs)."""
        java = check_prerequisites()
        if self.running:
            raise RuntimeError(f"zookeeper {self.connect_string} is already running")
        # a port chosen here and taken meanwhile is swapped before the config names it; a restart keeps its own
        if self.netns is None and port_in_use(self.host, self.port) and (
                not self.port_chosen or self.work_dir is not None or not self._take_another_port()):
            raise PortInUse(f"port {self.port} on {self.host} is already in use: pick another with --port")
        if self.work_dir is None:
            self._write_config()
        assert self.work_dir is not None
        log4j = os.path.join(self.work_dir, "log4j.properties")
        archive = class_archive(java)
        dump_to = os.path.join(self.work_dir, "classes.jsa")
        cds = class_archive_flags(archive, dump_to)
        self._archive_dump = (dump_to, archive) if archive is not None and not os.path.isfile(archive) else None
        cmd = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", *cds,
               f"-Dzookeeper.log.dir={self.work_dir}", f"-Dlog4j.configuration=file:{log4j}",
               *([f"-D{JAVA_LOGIN_CONFIG_PARAM}={os.path.join(self.work_dir, SERVER_JAAS_FILE)}"]
                 if self.sasl_users else []),
               "-cp", os.pathsep.join((ZOOKEEPER_JAR, *LOG_JARS)), MAIN_CLASS,
               os.path.join(self.work_dir, "zoo.cfg")]
        if self.netns is not None:
            cmd = self.netns.command(cmd)
        with open(os.path.join(self.work_dir, "zk.out"), "ab") as out:
            # A session of its own: a terminal's Ctrl-C goes to us, and we stop the server in order. It still dies
            # with us (PR_SET_PDEATHSIG, and the janitor removes its directory).
            self.proc = spawn(cmd, janitor_dirs=(self.work_dir,), stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, start_new_session=True)

    def _take_another_port(self) -> bool:
        """A fresh free port for this server, one nothing listens on now (True), within PORT_ATTEMPTS tries."""
        for _ in range(PORT_ATTEMPTS):
            self.port = free_port(self.host)
            if not port_in_use(self.host, self.port):
                return True
        return False

    def _write_config(self) -> None:
        self.work_dir = tempfile.mkdtemp(prefix="kactor-zk-")
        if self.user_data_dir is not None:
            self.data_dir = os.path.abspath(self.user_data_dir)
            os.makedirs(self.data_dir, exist_ok=True)
        else:
            self.data_dir = os.path.join(self.work_dir, "data")
            os.makedirs(self.data_dir)
        with open(os.path.join(self.work_dir, "log4j.properties"), "w", encoding="utf-8") as f:
            f.write(_LOG4J)
        cfg = (f"tickTime={self.tick_ms}\n"
               f"dataDir={self.data_dir}\n"
               f"clientPort={self.port}\n"
               f"clientPortAddress={self.host}\n"
               "maxClientCnxns=0\n"
               "admin.enableServer=false\n"
               "4lw.commands.whitelist=*\n")
        if self.max_session_timeout_ms is not None:
            cfg += f"maxSessionTimeout={self.max_session_timeout_ms}\n"
        if self.sasl_users:
            # SASL as Kafka's docs set ZooKeeper up for zookeeper.set.acl: SASLAuthenticationProvider (a client's
            # identity is sasl:<username>) checking DIGEST-MD5 logins against the JAAS Server section's
            # user_<name>="<password>", in a file of this server's private dir (mkdtemp: the owner's only)
            cfg += f"authProvider.sasl={SASL_AUTH_PROVIDER}\n"
            path = os.path.join(self.work_dir, SERVER_JAAS_FILE)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
                f.write(server_jaas_text(self.sasl_users))
        if self.peers:
            # initLimit/syncLimit in ticks: how long a follower may take to sync with, and lag behind, its leader.
            cfg += "initLimit=10\nsyncLimit=5\n" + "".join(
                f"server.{p.myid}={p.host}:{p.quorum_port}:{p.election_port}\n" for p in self.peers)
            with open(os.path.join(self.data_dir, "myid"), "w", encoding="utf-8") as f:
                f.write(f"{self.myid}\n")
        with open(os.path.join(self.work_dir, "zoo.cfg"), "w", encoding="utf-8") as f:
            f.write(cfg)

    def wait_ready(self, deadline: float) -> None:
        """Until ``deadline`` (time.monotonic()): ruok answers imok and srvr reports a mode; a failure stops the
        server and raises ZooKeeperUnavailable with the log's last line."""
        try:
            self._wait_ready(deadline)
        except BaseException:
            tail = self.log_tail()
            self.stop()
            if "Address already in use" in tail:
                raise PortInUse(
                    f"port {self.port} on {self.host} is already in use: pick another with --port") from None
            raise

    def _wait_ready(self, deadline: float) -> None:
        assert self.proc is not None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                last = self.log_tail(400).strip().splitlines()
                why = last[-1] if last else f"exit code {self.proc.returncode}"
                raise ZooKeeperUnavailable(f"zookeeper exited during startup: {why}")
            with contextlib.suppress(OSError):
                # `ruok` says imok as soon as the port is open, while `srvr` still answers "This ZooKeeper instance
                # is not currently serving requests": wait for both, or the first client may be turned away.
                if four_letter(self.host, self.port, "ruok", 0.5) == "imok" and self.mode() is not None:
                    return
            time.sleep(0.02)
        raise ZooKeeperUnavailable(f"zookeeper did not answer ruok on {self.connect_string} in time")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (a crash by default) and wait for the JVM to exit; config and data stay for restart()."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(sig)
            proc.wait()

    def restart(self, timeout: float = 30.0) -> EmbeddedZooKeeper:
        """Start the JVM again on the same config and data (after kill()); returns once it serves."""
        if self.work_dir is None:
            raise RuntimeError("restart() needs a server that was started and not stopped")
        self.launch()
        self.wait_ready(time.monotonic() + timeout)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, wait, SIGKILL if it lingers; then remove our temporary directories (never a user's data dir)."""
        with self._lock:
            proc = self.proc
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            # only a JVM that exited through its shutdown hooks wrote its archive whole
            if (self._archive_dump is not None and proc is not None and proc.returncode == SIGTERM_EXIT
                    and os.path.isfile(self._archive_dump[0])):
                keep_class_archive(*self._archive_dump)
            self._archive_dump = None
            if self.work_dir is not None:
                shutil.rmtree(self.work_dir, ignore_errors=True)
                janitor().forget_dir(self.work_dir)
                self.work_dir = None

    def __enter__(self) -> EmbeddedZooKeeper:
        return self.start() if self.proc is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class ZooKeeperEnsemble:
    """``n`` ZooKeeper servers forming one quorum on loopback (myid 1..n, dynamic client/quorum/election ports, a
    temporary directory each). ``start()`` returns once a quorum serves (a leader and a majority of followers).

    Servers are addressed by index 0..n-1 (myid = index + 1)::

        with ZooKeeperEnsemble(3, tick_ms=200) as ens:
            KazooClient(ens.connect_string)      # "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
            i = ens.leader()                     # who leads now (srvr's "Mode: leader")
            ens.kill(i)                          # SIGKILL it; the others elect a new leader
            ens.wait_quorum()                    # until a quorum serves again
            ens.restart(i)                       # same myid and data; returns once it serves (as a follower)

    ``n`` = 1 is a standalone server. ``max_session_timeout_ms`` raises ZooKeeper's cap on session timeouts
    (default 20 ticks) so a small tickTime (fast elections) can still grant Kafka's 18 s sessions. ``netns``: one
    host per server (edges/netns.py), each server in its namespace on ZooKeeper's usual ports 2181/2888/3888.
    ``data_dirs``: one dataDir per server, kept by stop() (``kactor cluster --data-dir``: the same ZooKeeper state at
    the next start); by default each server has a temporary one. ``sasl_users`` (user → password): every server
    accepts these SASL DIGEST-MD5 logins (EmbeddedZooKeeper's).
    """

    def __init__(self, n: int = 3, tick_ms: int = 2000, max_session_timeout_ms: int | None = None,
                 bind: str = "127.0.0.1", netns: Sequence[NetHost] = (),
                 data_dirs: Sequence[str] | None = None, sasl_users: Mapping[str, str] | None = None) -> None:
        if n < 1:
            raise ValueError(f"an ensemble needs at least 1 server, not {n}")
        if data_dirs is not None and len(data_dirs) != n:
            raise ValueError(f"{n} servers need {n} data dirs, not {len(data_dirs)}")
        dirs: Sequence[str | None] = data_dirs if data_dirs is not None else [None] * n
        if netns:
            if len(netns) != n:
                raise ValueError(f"{n} servers need {n} hosts, not {len(netns)}")
            peers = tuple(QuorumPeer(i + 1, CLIENT_PORT, QUORUM_PORT, ELECTION_PORT, h.address)
                          for i, h in enumerate(netns))
            self.servers = [EmbeddedZooKeeper(tick_ms=tick_ms, myid=p.myid if n > 1 else None,
                                              peers=peers if n > 1 else (), data_dir=d,
                                              max_session_timeout_ms=max_session_timeout_ms, netns=h,
                                              sasl_users=sasl_users)
                            for p, h, d in zip(peers, netns, dirs, strict=True)]
            return
        _check_loopback(bind)
        if n == 1:
            self.servers = [EmbeddedZooKeeper(tick_ms=tick_ms, bind=bind, data_dir=dirs[0],
                                              max_session_timeout_ms=max_session_timeout_ms, sasl_users=sasl_users)]
            return
        peers = tuple(QuorumPeer(i + 1, free_port(bind), free_port(bind), free_port(bind)) for i in range(n))
        self.servers = [EmbeddedZooKeeper(port=p.client_port, tick_ms=tick_ms, bind=bind, myid=p.myid, peers=peers,
                                          data_dir=d, max_session_timeout_ms=max_session_timeout_ms,
                                          sasl_users=sasl_users)
                        for p, d in zip(peers, dirs, strict=True)]

    @property
    def n(self) -> int:
        return len(self.servers)

    @property
    def quorum(self) -> int:
        return self.n // 2 + 1

    @property
    def connect_string(self) -> str:
        return ",".join(s.connect_string for s in self.servers)

    def pids(self) -> list[int]:
        return [s.pid for s in self.servers if s.running and s.pid is not None]

    def modes(self) -> list[str | None]:
        """Each server's srvr mode (None: down, or not serving: electing)."""
        return [s.mode() if s.running else None for s in self.servers]

    def start(self, timeout: float = 60.0) -> ZooKeeperEnsemble:
        """Launch every server, then wait for a quorum (ZooKeeperUnavailable, all stopped, if none forms)."""
        self.launch()
        self.wait_started(timeout)
        return self

    def launch(self) -> None:
        """Start every server's JVM without waiting for a quorum, so that what needs ZooKeeper (LocalCluster's
        brokers) can start meanwhile; `wait_started` then waits. ZooKeeperUnavailable, all stopped, if one cannot
        be launched (no java, its port taken)."""
        try:
            for s in self.servers:
                s.launch()
        except BaseException:
            self.stop()
            raise

    def wait_started(self, timeout: float = 60.0) -> None:
        """After `launch`: until a quorum serves (ZooKeeperUnavailable, all stopped, if none forms in time)."""
        try:
            self.wait_quorum(timeout)
        except BaseException:
            self.stop()
            raise

    def wait_quorum(self, timeout: float = 30.0) -> int:
        """Until exactly one server leads and a majority serves; returns the leader's index."""
        deadline = time.monotonic() + timeout
        while True:
            modes = self.modes()
            serving = [m for m in modes if m in ("leader", "follower", "standalone")]
            leaders = [i for i, m in enumerate(modes) if m in ("leader", "standalone")]
            if len(leaders) == 1 and len(serving) >= self.quorum:
                return leaders[0]
            for s in self.servers:
                if s.proc is not None and s.proc.poll() is not None and s.proc.returncode not in (-9, -15, 143):
                    last = s.log_tail(400).strip().splitlines()
                    raise ZooKeeperUnavailable(f"zookeeper {s.myid} exited: {last[-1] if last else s.proc.returncode}")
            if time.monotonic() >= deadline:
                raise ZooKeeperUnavailable(f"no ZooKeeper quorum on {self.connect_string} within {timeout:g}s "
                                           f"(modes: {modes})")
            time.sleep(0.05)

    def wait_serving(self, timeout: float = 30.0) -> None:
        """Until every running server serves (leader or follower)."""
        deadline = time.monotonic() + timeout
        while any(s.running and s.mode() is None for s in self.servers):
            if time.monotonic() >= deadline:
                raise ZooKeeperUnavailable(f"not every ZooKeeper serves within {timeout:g}s: {self.modes()}")
            time.sleep(0.05)

    def leader(self, timeout: float = 30.0) -> int:
        """The index of the server that leads now (waits for a quorum to have one)."""
        return self.wait_quorum(timeout)

    def kill(self, i: int, sig: int = signal.SIGKILL) -> None:
        """Crash server ``i`` (SIGKILL by default; SIGTERM for an orderly stop). Its data stays for restart()."""
        self.servers[i].kill(sig)

    def restart(self, i: int, timeout: float = 30.0) -> None:
        """Start server ``i`` again with its myid and data; returns once it serves."""
        self.servers[i].restart(timeout)

    def stop(self) -> None:
        """Stop every server and remove every temporary directory."""
        for s in self.servers:
            s.stop()

    def __enter__(self) -> ZooKeeperEnsemble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(port: int | None = 2181, data_dir: str | None = None, tick_ms: int = 2000,
                  ready_timeout: float = 30.0, ensemble: int = 1) -> int:
    """Run a ZooKeeper (``ensemble`` > 1: that many servers in one quorum) until SIGINT, SIGTERM or SIGHUP (the
    ``kactor zookeeper`` command). An ensemble's client ports are ``port``, ``port``+1, ... (free ones if ``port`` is
    None). Returns an exit code."""
    stop_requested = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGINT, lambda signum, frame: stop_requested.set())
    install_stop_signals(lambda signum: stop_requested.set())
    if ensemble == 1:
        server: EmbeddedZooKeeper | ZooKeeperEnsemble = EmbeddedZooKeeper(
            port=2181 if port is None else port, data_dir=data_dir, tick_ms=tick_ms)
    else:
        server = ZooKeeperEnsemble(ensemble, tick_ms=tick_ms)
        if port is not None:
            for i, member in enumerate(server.servers):
                member.port = port + i
    try:
        server.start(ready_timeout)
        what = ("zookeeper" if isinstance(server, EmbeddedZooKeeper)
                else f"zookeeper ensemble of {ensemble} (leader: server {server.leader() + 1})")
        print(f"{what} ready at {server.connect_string}", flush=True)
        members = server.servers if isinstance(server, ZooKeeperEnsemble) else [server]
        while not stop_requested.wait(0.5):
            dead = [m for m in members if not m.running]
            if dead:
                print(f"zookeeper {dead[0].connect_string} exited unexpectedly: {dead[0].log_tail(300).strip()}",
                      file=sys.stderr)
                return 1
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
