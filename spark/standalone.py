"""A Spark standalone cluster on loopback, started from pyspark's own jars: one master and N workers.

Used by the tests (the standalone summary must give local mode's tables) and by ``python -m spark.bench
--standalone`` (both modes timed on the same trace in one run). Each daemon is a plain ``java -cp
$SPARK_HOME/jars/*`` process (SPARK_HOME: the pyspark package, which ships Spark's jars), what
``sbin/start-master.sh`` / ``start-worker.sh`` run in the foreground, started by edges.children.spawn: the kernel
sends it SIGTERM if this process dies (PR_SET_PDEATHSIG), and the janitor SIGKILLs what lingers and removes the
folder, so nothing outlives a killed test run; a worker's executors exit when their worker goes. Everything (logs,
the workers' work and scratch folders) lives in one temporary folder that stop() removes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from typing import Any

from edges.children import janitor, spawn
from spark.session import LOG4J_CONFIG
from zk_bridge.server import free_port

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
# A daemon only schedules (the executors it launches do the work): Spark's default 1 GB heap is far more than it
# uses, and on a 2-core machine shared with brokers every JVM's footprint counts.
DAEMON_HEAP = "512m"


class StandaloneError(RuntimeError):
    """The cluster did not come up (a daemon exited, or the workers did not register in time)."""


def scala_version(home: str) -> str:
    """The Scala version Spark's jars were built for (``spark-core_2.13-...jar`` -> "2.13"). The worker builds its
    executors' command line with Spark's launcher, which needs it (bin/load-spark-env.sh exports it)."""
    for name in os.listdir(os.path.join(home, "jars")):
        if name.startswith("spark-core_"):
            return name[len("spark-core_"):].split("-", 1)[0]
    raise StandaloneError(f"{home}/jars holds no spark-core jar")


def spark_home() -> str:
    """The pyspark package's folder: it holds Spark's jars (``jars/``) and ``bin/``, as a Spark distribution does."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


class StandaloneCluster:
    """``workers`` workers of ``cores`` cores and ``memory`` each, registered with one master, all on ``host``."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "2g", host: str = "127.0.0.1") -> None:
        self.workers, self.cores, self.memory, self.host = workers, cores, memory, host
        self.port = free_port(host)
        self.webui_port = free_port(host)
        self.base_dir: str | None = None
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def state(self, timeout: float = 2.0) -> dict[str, Any]:
        """The master's own view (its web UI's ``/json/``): status, workers with their state, cores, memory."""
        url = f"http://{self.host}:{self.webui_port}/json/"
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - a loopback http URL we built
            return json.load(r)

    def alive_workers(self) -> list[dict[str, Any]]:
        try:
            return [w for w in self.state().get("workers", []) if w.get("state") == "ALIVE"]
        except OSError:
            return []

    def _launch(self, name: str, args: list[str]) -> None:
        assert self.base_dir is not None
        home = spark_home()
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
        env = dict(os.environ, SPARK_HOME=home, SPARK_SCALA_VERSION=scala_version(home), SPARK_LOCAL_IP=self.host,
                   SPARK_LOCAL_DIRS=os.path.join(self.base_dir, f"{name}-local"))
        cmd = [java, f"-Xmx{DAEMON_HEAP}", f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}",
               "-cp", os.path.join(home, "jars", "*"), *args]
        with open(os.path.join(self.base_dir, f"{name}.log"), "wb") as out:
            self.procs.append(spawn(cmd, janitor_dirs=(self.base_dir,), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=self.base_dir))

    def log_tail(self, name: str, limit: int = 1500) -> str:
        if self.base_dir is None:
            return ""
        try:
            with open(os.path.join(self.base_dir, f"{name}.log"), encoding="utf-8", errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""

    def start(self, timeout: float = 120.0) -> StandaloneCluster:
        """Start the master and the workers; return once the master lists every worker ALIVE."""
        if self.procs:
            raise RuntimeError("this StandaloneCluster was already started")
        self.base_dir = tempfile.mkdtemp(prefix="kactor-spark-standalone-")
        try:
            self._launch("master", [MASTER_CLASS, "--host", self.host, "--port", str(self.port),
                                    "--webui-port", str(self.webui_port)])
            for i in range(self.workers):
                work = os.path.join(self.base_dir, f"worker-{i}")
                os.makedirs(work)
                # a worker retries its registration until the master is up, so all start at once
                self._launch(f"worker-{i}", [WORKER_CLASS, self.master_url, "--host", self.host,
                                             "--cores", str(self.cores), "--memory", self.memory,
                                             "--webui-port", str(free_port(self.host)), "--work-dir", work])
            self._wait_registered(time.monotonic() + timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_registered(self, deadline: float) -> None:
        names = ["master", *(f"worker-{i}" for i in range(self.workers))]
        while time.monotonic() < deadline:
            for name, proc in zip(names, self.procs, strict=True):
                if proc.poll() is not None:
                    raise StandaloneError(f"spark {name} exited with code {proc.returncode}: "
                                          f"{self.log_tail(name).strip()[-600:]}")
            try:
                state = self.state()
            except OSError:  # the master's web UI not up yet
                state = {}
            alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
            if state.get("status") == "ALIVE" and len(alive) == self.workers:
                return
            time.sleep(0.2)
        raise StandaloneError(f"{self.workers} worker(s) did not register with {self.master_url} in time "
                              f"({len(self.alive_workers())} did)")

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the workers (they stop their executors), then the master; SIGKILL what lingers; remove the
        folder."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []
        if self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            janitor().forget_dir(self.base_dir)
            self.base_dir = None

    def __enter__(self) -> StandaloneCluster:
        return self.start() if not self.procs else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
