"""The SparkSession every kactor Spark job uses: local, loopback-bound, no UI, few shuffle partitions, a 3 GB
driver heap, quiet."""

from __future__ import annotations

import os
from typing import Any

DEFAULT_MASTER = "local[2]"
# In local mode the executors run inside the driver's JVM, so this heap holds the scans, the shuffles and the cached
# observability records. 3 GB keeps the JVM's resident size under 4 GB (heap + ~0.5 GB of metaspace, code cache
# and thread stacks; spark.bench measures it) while a 10-million-line trace's cache stays in memory. A driver
# memory set by spark-submit or in ``conf`` wins.
DRIVER_MEMORY = "3g"
# Input splits of 128 MB: ~100 tasks for a 12 GB trace on two cores, so a straggler costs little and each task's
# start-up (~10 ms) is noise.
MAX_PARTITION_BYTES = str(128 << 20)
LOG4J_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
# The JIT: Java's optimising compiler (C2) took 41 of the driver JVM's 99 CPU-s summarising a million lines and
# ~60 CPU-s at 10 million, on two cores the summary also needs: Spark's generated code, Janino, Java serialization,
# one class per query. Raising its thresholds fivefold leaves the warm-but-not-hot code to the quick compiler
# (C1): compiler time 41 -> 25 CPU-s at a million lines, the tasks ~2 CPU-s slower; the hot loops of a long scan
# still reach C2 within a second or two.
JVM_OPTIONS = ("-XX:CompileThresholdScaling=5",)


def build_session(master: str | None = None, app_name: str = "kactor-trace-summary",
                  shuffle_partitions: int = 4, conf: dict[str, Any] | None = None) -> Any:
    """Create (or return the running) SparkSession. Without ``master``: spark-submit's --master, else local[2].

    Any master URL is accepted (``local[*]``, ``spark://host:7077``...); the driver binds to 127.0.0.1 so a
    local job never listens on a public interface.
    """
    os.environ.setdefault("PYSPARK_PYTHON", "python3")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    # Under spark-submit (or a pyspark shell) the JVM already runs and knows --master; otherwise asking SparkConf
    # would start the JVM before our driver options are set.
    preset = SparkConf().get("spark.master", None) if os.environ.get("PYSPARK_GATEWAY_PORT") else None
    builder = (
        SparkSession.builder.master(master or preset or DEFAULT_MASTER)
        .appName(app_name)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.files.maxPartitionBytes", MAX_PARTITION_BYTES)
        .config("spark.sql.session.timeZone", "UTC")
    )
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):  # only a JVM we start ourselves takes a heap size from here
        builder = builder.config("spark.driver.memory", DRIVER_MEMORY)
    java_options = list(JVM_OPTIONS)
    if os.path.exists(LOG4J_CONFIG):  # quiet from the first line (setLogLevel alone comes after start-up chatter)
        java_options.insert(0, f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}")
    builder = builder.config("spark.driver.extraJavaOptions", " ".join(java_options))
    for key, value in (conf or {}).items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def active_session() -> Any:
    """The running SparkSession of this process, or None."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


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
            try:
                proc.wait(timeout=10)
            except Exception:  # noqa: BLE001 - a JVM that will not exit is killed
                proc.kill()
        SparkContext._gateway = None
        SparkContext._jvm = None
