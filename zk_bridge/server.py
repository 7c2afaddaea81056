"""A real standalone ZooKeeper (Debian's 3.8 jar) run as a child JVM, for tests and `kactor zookeeper`.

Why a plain ``java -cp`` and not ``zkServer.sh``: the Debian script forces its own log dir, has no SLF4J binding (so no
server log at all) and turns on JMX. The config form (not ``ZooKeeperServerMain <port> <dir>``) is used because only
it honours ``clientPortAddress``: without it ZooKeeper binds every interface, and we must stay on loopback.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from types import TracebackType

# Debian's package locations (zookeeper.jar's manifest Class-Path pulls in its other jars; it lacks an SLF4J binding).
ZOOKEEPER_JAR = "/usr/share/java/zookeeper.jar"
LOG_JARS = ("/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar")
INSTALL_HINT = "apt-get install -y zookeeper default-jre-headless"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

_LOG4J = (
    "log4j.rootLogger=WARN, CONSOLE\n"
    "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %m%n\n"
)


class ZooKeeperUnavailable(RuntimeError):  # noqa: N818 - the name others import
    """ZooKeeper cannot be started here (missing java or jar, port taken, server died); the message is one line."""


def check_prerequisites() -> str:
    """Return the java executable to use, or raise ZooKeeperUnavailable saying what to install."""
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperUnavailable(f"java not found on PATH: {INSTALL_HINT}")
    if not os.path.isfile(ZOOKEEPER_JAR):
        raise ZooKeeperUnavailable(f"{ZOOKEEPER_JAR} not found: {INSTALL_HINT}")
    return java


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


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


class EmbeddedZooKeeper:
    """One standalone ZooKeeper server process bound to loopback.

    ``data_dir`` given → it is used and kept; otherwise a temporary one is created and removed by stop().
    The config and server log always live in a private temporary directory that stop() removes.
    """

    def __init__(self, port: int | None = None, data_dir: str | None = None, tick_ms: int = 2000,
                 bind: str = "127.0.0.1") -> None:
        _check_loopback(bind)
        self.host = bind
        self.port = port if port is not None else free_port(bind)
        self.tick_ms = tick_ms
        self.user_data_dir = data_dir
        self.work_dir: str | None = None
        self.data_dir: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None
        self._lock = threading.Lock()

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
        java = check_prerequisites()
        if port_in_use(self.host, self.port):
            raise ZooKeeperUnavailable(f"port {self.port} on {self.host} is already in use: pick another with --port")
        self._write_config()
        assert self.work_dir is not None and self.data_dir is not None
        log4j = os.path.join(self.work_dir, "log4j.properties")
        cmd = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               f"-Dzookeeper.log.dir={self.work_dir}", f"-Dlog4j.configuration=file:{log4j}",
               "-cp", os.pathsep.join((ZOOKEEPER_JAR, *LOG_JARS)), MAIN_CLASS,
               os.path.join(self.work_dir, "zoo.cfg")]
        t0 = time.monotonic()
        with open(os.path.join(self.work_dir, "zk.out"), "wb") as out:
            # A session of its own: a terminal's Ctrl-C goes to us, and we stop the server in order.
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        try:
            self._wait_ready(t0, timeout)
        except BaseException:
            tail = self.log_tail()
            self.stop()
            if "Address already in use" in tail:
                raise ZooKeeperUnavailable(
                    f"port {self.port} on {self.host} is already in use: pick another with --port") from None
            raise
        self.startup_s = time.monotonic() - t0
        return self

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
        with open(os.path.join(self.work_dir, "zoo.cfg"), "w", encoding="utf-8") as f:
            f.write(f"tickTime={self.tick_ms}\n"
                    f"dataDir={self.data_dir}\n"
                    f"clientPort={self.port}\n"
                    f"clientPortAddress={self.host}\n"
                    "maxClientCnxns=0\n"
                    "admin.enableServer=false\n"
                    "4lw.commands.whitelist=*\n")

    def _wait_ready(self, t0: float, timeout: float) -> None:
        assert self.proc is not None
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                last = self.log_tail(400).strip().splitlines()
                why = last[-1] if last else f"exit code {self.proc.returncode}"
                raise ZooKeeperUnavailable(f"zookeeper exited during startup: {why}")
            with contextlib.suppress(OSError):
                # `ruok` says imok as soon as the port is open, while `srvr` still answers "This ZooKeeper instance
                # is not currently serving requests": wait for both, or the first client may be turned away.
                if (four_letter(self.host, self.port, "ruok", 0.5) == "imok"
                        and "Mode:" in four_letter(self.host, self.port, "srvr", 0.5)):
                    return
            time.sleep(0.02)
        raise ZooKeeperUnavailable(f"zookeeper did not answer ruok on {self.connect_string} within {timeout:.0f}s")

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
            if self.work_dir is not None:
                shutil.rmtree(self.work_dir, ignore_errors=True)
                self.work_dir = None

    def __enter__(self) -> EmbeddedZooKeeper:
        return self.start() if self.proc is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def serve_forever(port: int = 2181, data_dir: str | None = None, tick_ms: int = 2000,
                  ready_timeout: float = 30.0) -> int:
    """Run a ZooKeeper until SIGINT/SIGTERM (the ``kactor zookeeper`` command). Returns an exit code."""
    stop_requested = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        stop_requested.set()

    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = EmbeddedZooKeeper(port=port, data_dir=data_dir, tick_ms=tick_ms)
    try:
        server.start(ready_timeout)
        print(f"zookeeper ready at {server.connect_string}", flush=True)
        while not stop_requested.wait(0.5):
            if not server.running:
                print(f"zookeeper exited unexpectedly: {server.log_tail(300).strip()}", file=sys.stderr)
                return 1
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
