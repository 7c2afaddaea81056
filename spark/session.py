"""The SparkSession every kactor Spark job uses: local by default, loopback-bound, no UI, few shuffle partitions,
a 3 GB driver heap, quiet. With a standalone cluster's master (``spark://HOST:PORT``) the executors run on its
workers: the master is checked reachable before the driver starts, and the session is only returned once an
executor has registered (a master without a free worker would otherwise leave the first job waiting forever)."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import shutil
import socket
import time
from typing import Any

DEFAULT_MASTER = "local[2]"
# Executors on a cluster's workers: one core and a 2 GB heap each, so a worker of 2 cores on a 24 GB machine runs
# two (one per core) and leaves the rest of the machine to its brokers and ZooKeeper; the summary's cache is
# spread over them (and spills to disk: MEMORY_AND_DISK). A worker needs --memory 2g or more per core to take any.
# Values given in ``conf`` (or `kactor trace summarize --conf`) win.
EXECUTOR_MEMORY = "2g"
EXECUTOR_CORES = 1
# How long a cluster session waits for its first executor before giving up with a message.
EXECUTOR_WAIT_S = 60.0
MASTER_CONNECT_TIMEOUT_S = 3.0
# In local mode the executors run inside the driver's JVM, so this heap holds the scans, the shuffles and the cached
# observability records. 3 GB keeps the JVM's resident size under 4 GB (heap + ~0.5 GB of metaspace, code cache
# and thread stacks; spark.bench measures it) while a 10-million-line trace's cache stays in memory. A driver
# memory set by spark-submit or in ``conf`` wins.
DRIVER_MEMORY = "3g"
# Input splits of 128 MB: ~100 tasks for a 12 GB trace on two cores, so a straggler costs little and each task's
# start-up (~10 ms) is noise.
MAX_PARTITION_BYTES = str(128 << 20)
LOG4J_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
# The JIT: the quick compiler (C1) only, no optimising one (C2). A summary from the columns cache is mostly fixed
# costs (~10 queries planned, their code generated and compiled, short jobs over small columns), and C2 compiling
# that code cost more than its faster code saved: warm summaries, driver JVM CPU with C2 behind raised thresholds
# (`-XX:CompileThresholdScaling=5`, before) -> C1 only (2026-11-29, one run each, load 3-8): 2 million messages
# 29.7 -> 20.2 CPU-s (C2's 7.5 gone, the tasks 9.1 -> 8.0), 10 million 44.7 -> 40.7 and 50.4 -> 37.0 (the tasks
# 18-21 -> 21-25 CPU-s). (On 2026-11-23 C1 only was rejected when the summary parsed the JSON of every line itself:
# there the tasks' hot loops were most of the work and ran twice as slow.) The parallel collector, not G1: with C1
# only, one run each (2026-11-29, load 3-6), 2 million messages 16.2 (G1) -> 14.8 CPU-s (serial 14.2), 10 million
# 33.9 -> 31.6 (serial 31.9, its collections stopping every task for 4.2 s in all).
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC")
# Class-data sharing (AppCDS): the driver JVM maps the classes an earlier summary loaded (Spark's, Scala's,
# Janino's: ~10,000 of them from 280 jars) from an archive instead of finding, reading and verifying each one.
# Measured (2026-11-24, load ~2.5-3.5): session start 4.5-9.0 -> 2.4-3.6 s, its JVM CPU 5.8-6.4 -> 3.1-3.7 s.
# The archive is written by a JVM as it exits (`prepare_cds_archive`, ~15 s, once per Java, pyspark and options);
# an ordinary session only uses it when it is there (and the JVM ignores, quietly, an archive that does not
# match it). KACTOR_SPARK_CDS=0 turns it off.
CDS_ENV = "KACTOR_SPARK_CDS"
_CDS_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_dumping: dict[str, Any] = {}  # the session being archived: {"tmp": path, "final": path}


def _java_options() -> list[str]:
    options = list(JVM_OPTIONS)
    if os.path.exists(LOG4J_CONFIG):  # quiet from the first line (setLogLevel alone comes after start-up chatter)
        options.insert(0, f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}")
    return options


def _java_binary() -> str | None:
    """The java that spark-submit runs (JAVA_HOME's, else the PATH's), resolved."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def cds_archive_path(java_options: str) -> str | None:
    """Where the class-data archive for this Java, this pyspark and these driver options lives (None: no java)."""
    java = _java_binary()
    if java is None:
        return None
    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    names = sorted(os.listdir(jars)) if os.path.isdir(jars) else []
    st = os.stat(java)
    key = "\n".join([java, str(st.st_mtime_ns), str(st.st_size), pyspark.__version__, DRIVER_MEMORY, java_options,
                     *names])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "kactor", f"spark-cds-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa")


def _cds_options(java_options: str, dump: bool) -> list[str]:
    """The JVM options for class-data sharing: use the archive if it exists; ``dump``: write it at exit."""
    if os.environ.get(CDS_ENV, "1") == "0":
        return []
    path = cds_archive_path(java_options)
    if path is None:
        return []
    if dump:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        _dumping.update(tmp=tmp, final=path)
        return [f"-XX:ArchiveClassesAtExit={tmp}", _CDS_QUIET]
    if os.path.isfile(path):
        return [f"-XX:SharedArchiveFile={path}", _CDS_QUIET]
    return []


class SparkMasterError(RuntimeError):
    """A cluster master that cannot be used: unreachable, a bad URL, or no executor within the wait."""


def standalone_masters(master: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a standalone master URL ``spark://H1:P1[,H2:P2...]`` (several: masters kept
    highly available through ZooKeeper); [] for any other kind of master (local, yarn, k8s://...)."""
    if not master.startswith("spark://"):
        return []
    out = []
    for item in master[len("spark://"):].split(","):
        host, sep, port = item.rpartition(":")
        host = host.strip("[]")  # [::1]:7077
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise SparkMasterError(f"{master}: not a Spark master URL (expected spark://HOST:PORT[,HOST:PORT...])")
        out.append((host, int(port)))
    return out


def _is_loopback(host: str) -> bool:
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def check_master(master: str, conf: dict[str, Any] | None = None,
                 timeout: float = MASTER_CONNECT_TIMEOUT_S) -> None:
    """Fail fast, before the driver JVM starts, for a standalone master nobody answers at (Spark itself retries its
    registration for a minute, then stops the context), or one on another machine while the driver would still
    bind loopback, where that machine's executors could never connect back to it (checked first: nothing is
    sent off the machine unless configured). Other masters pass."""
    addresses = standalone_masters(master)
    if not addresses:
        return
    if "spark.driver.host" not in (conf or {}) and not all(_is_loopback(h) for h, _ in addresses):
        raise SparkMasterError(
            f"{master} is not on this machine's loopback, and the driver binds 127.0.0.1: give "
            "--conf spark.driver.host=ADDRESS, an address of this machine the workers can reach")
    errors = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                break
        except OSError as e:
            errors.append(f"{host}:{port}: {e.strerror or e}")
    else:
        raise SparkMasterError(f"cannot reach the Spark master {master} ({'; '.join(errors)})")


def wait_for_executors(spark: Any, master: str, timeout: float = EXECUTOR_WAIT_S) -> int:
    """Block until at least one executor has registered with the driver; return how many have. Raises
    SparkMasterError after ``timeout`` s: the master has no worker with a free core and the executor memory."""
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus  # the block managers: the driver's + executors'
    deadline = time.monotonic() + timeout
    while True:
        n = status().size() - 1
        if n > 0:
            return n
        if time.monotonic() >= deadline:
            conf = spark.sparkContext.getConf()
            raise SparkMasterError(
                f"no executor registered with {master} within {timeout:g} s: does the master have an alive worker "
                f"with {conf.get('spark.executor.cores', '1')} free core(s) and "
                f"{conf.get('spark.executor.memory', '1g')} of free memory? (its web UI lists them)")
        time.sleep(0.1)


def build_session(master: str | None = None, app_name: str = "kactor-trace-summary",
                  shuffle_partitions: int = 4, conf: dict[str, Any] | None = None, cds_dump: bool = False,
                  executor_wait_s: float = EXECUTOR_WAIT_S) -> Any:
    """Create (or return the running) SparkSession. Without ``master``: spark-submit's --master, else local[2].

    Any master URL is accepted (``local[*]``, ``spark://host:7077``...); the driver binds to 127.0.0.1 so a
    local job never listens on a public interface (``conf``'s spark.driver.host, if given, is also the address it
    binds, as in Spark). With a standalone master the executors get EXECUTOR_CORES and EXECUTOR_MEMORY unless
    ``conf`` says otherwise, the master is checked first and the session returned once an executor has
    registered (SparkMasterError otherwise, within ``executor_wait_s``). ``cds_dump``: this session's JVM writes
    the class-data archive the next sessions start from (as ``stop_session`` stops it; see
    ``prepare_cds_archive``).
    """
    conf = dict(conf or {})
    driver_host = conf.get("spark.driver.host", "127.0.0.1")
    bind_address = conf.get("spark.driver.bindAddress", driver_host)
    os.environ.setdefault("PYSPARK_PYTHON", "python3")
    os.environ.setdefault("SPARK_LOCAL_IP", bind_address)
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    # Under spark-submit (or a pyspark shell) the JVM already runs and knows --master; otherwise asking SparkConf
    # would start the JVM before our driver options are set.
    preset = SparkConf().get("spark.master", None) if os.environ.get("PYSPARK_GATEWAY_PORT") else None
    master = master or preset or DEFAULT_MASTER
    cluster = bool(standalone_masters(master))
    if cluster:
        check_master(master, conf)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.bindAddress", bind_address)
        .config("spark.driver.host", driver_host)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.files.maxPartitionBytes", MAX_PARTITION_BYTES)
        .config("spark.sql.session.timeZone", "UTC")
        # Adaptive execution re-plans every query at each stage boundary: for the summary's ~20 small queries over a
        # cache, planning on the driver, not work (a million lines, warm, back to back: tables 5.9-6.0 -> 4.4-5.0 s,
        # the same tables); its partition coalescing has nothing to do with 4 shuffle partitions.
        .config("spark.sql.adaptive.enabled", "false")
    )
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):  # only a JVM we start ourselves takes a heap size from here
        builder = builder.config("spark.driver.memory", DRIVER_MEMORY)
    java_options = _java_options()
    if not os.environ.get("PYSPARK_GATEWAY_PORT") and "spark.driver.extraJavaOptions" not in conf:
        java_options += _cds_options(" ".join(java_options), cds_dump)
    builder = builder.config("spark.driver.extraJavaOptions", " ".join(java_options))
    if cluster:
        # The executors' JVMs get the driver's JIT option and quiet logging; the log configuration is named by its
        # path here, so a worker where kactor is elsewhere logs at Spark's default level (log4j says so, once).
        builder = (builder.config("spark.executor.memory", EXECUTOR_MEMORY)
                   .config("spark.executor.cores", str(EXECUTOR_CORES))
                   .config("spark.executor.extraJavaOptions", " ".join(_java_options())))
    for key, value in conf.items():
        builder = builder.config(key, str(value))
    fresh = active_session() is None
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if cluster and fresh:
        try:
            wait_for_executors(spark, master, executor_wait_s)
        except BaseException:
            stop_session(spark)
            raise
    return spark


def active_session() -> Any:
    """The running SparkSession of this process, or None: None only if no SparkContext runs here.

    Not SparkSession.getActiveSession() alone: in pyspark 4 it asks the JVM for its *thread-local* active session,
    and with pinned threads a Python thread (or a new py4j connection of the same thread) maps to a JVM thread that
    never set one, so it said None while a session ran, and a command that took that for "ours" stopped a session
    it did not start."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        return None
    return (SparkSession.getActiveSession() or SparkSession._instantiatedSession
            or SparkSession.builder.getOrCreate())


def stop_session(spark: Any) -> None:
    """Stop ``spark`` and the JVM pyspark started for it. SparkSession.stop leaves the py4j gateway's JVM (about
    1 GB) running until the Python process exits; a long-lived process done with Spark should not keep it."""
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        proc = getattr(gateway, "proc", None)  # launch_gateway's Popen: wait, so no zombie or orphan is left
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()  # PythonGatewayServer exits when its stdin closes
            dump = dict(_dumping)
            _dumping.clear()
            try:
                proc.wait(timeout=120 if dump else 10)  # writing the class-data archive takes ~10-15 s
            except Exception:  # noqa: BLE001 - a JVM that will not exit is killed
                proc.kill()
                proc.wait()
            if dump and os.path.exists(dump["tmp"]):
                if proc.returncode == 0 and os.path.getsize(dump["tmp"]) > 0:
                    os.replace(dump["tmp"], dump["final"])
                else:
                    os.remove(dump["tmp"])
        SparkContext._gateway = None
        SparkContext._jvm = None


def prepare_cds_archive(trace_dir: str) -> bool:
    """Write the class-data archive (if there is none yet) from a session that summarises ``trace_dir`` (a small
    trace: what matters is the classes a summary loads). Returns whether it wrote one."""
    if not cds_archive_missing() or active_session() is not None:
        return False
    from spark.summarize import summarize

    spark = build_session(cds_dump=True)
    try:
        summarize(spark, [trace_dir], None)
    finally:
        stop_session(spark)
    return not cds_archive_missing()


def cds_archive_missing() -> bool:
    """Whether class-data sharing is on and its archive for this Java, pyspark and options not written yet."""
    if os.environ.get(CDS_ENV, "1") == "0":
        return False
    path = cds_archive_path(" ".join(_java_options()))
    return path is not None and not os.path.isfile(path)
