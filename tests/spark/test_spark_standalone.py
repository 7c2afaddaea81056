"""The summary on a real Spark standalone cluster (a master and two workers of pyspark's own jars, on loopback)
gives exactly local mode's tables; a master with no room for an executor fails with a message instead of hanging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from spark_support import write_trace

# One xdist group with the tests sharing the SparkSession (test_standalone_tables_equal_local needs it): the module's
# cluster (three JVMs, 20-35 s to start on a loaded machine) then starts once a run. Its other tests, needing no
# session, would otherwise be handed out one by one, and each worker (or each return to this module) start its own.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what differs between two runs of the same summary: how long it took
TIMINGS = ("elapsed_s", "phases_s")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def standalone() -> Iterator[Any]:
    """A master and two workers (1 core, 2 GB each); afterwards no daemon is left and their folder is gone."""
    from spark.standalone import StandaloneCluster

    cluster = StandaloneCluster(workers=2, cores=1, memory="2g").start()
    pids, base = cluster.pids, cluster.base_dir
    try:
        yield cluster
    finally:
        cluster.stop()
    assert not [p for p in pids if _alive(p)] and not os.path.exists(base)


def kactor(*argv: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``kactor ARGV`` in a process of its own: a process has one SparkContext, and the tests' is local."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (REPO, os.environ.get("PYTHONPATH")))))
    return subprocess.run([sys.executable, "-m", "kactor", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def test_cluster_registered(standalone: Any) -> None:
    state = standalone.state()
    assert state["status"] == "ALIVE" and state["url"] == standalone.master_url
    workers = standalone.alive_workers()
    assert [(w["host"], w["cores"], w["memory"]) for w in workers] == [("127.0.0.1", 1, 2048)] * 2


def test_standalone_tables_equal_local(spark: Any, standalone: Any, tmp_path) -> None:
    """One generated trace plus the handcrafted one (its crash-truncated last line takes the slow-line path):
    every table's JSON file, byte for byte, and summary.json but for its timings, as local[2] wrote them. The tests'
    session evaluates interpreted (tests/spark/conftest.py), the command's generates code, as kactor's sessions do:
    the same tables from both."""
    from kactor.sim_boot import SimBoot
    from sim.generate import generate
    from spark.summarize import TABLES, summarize

    traces = [str(tmp_path / "generated"), write_trace(str(tmp_path / "handcrafted"))]
    # one folder down, so that the summary reads traces[0] as a campaign folder: a cluster apart from the handcrafted
    # trace's for the incidents (the simulator's clock starts in 2023, the handcrafted trace in 2026; as one cluster
    # its brokers would be down, and their partitions under-replicated, through every 1 s bucket in between)
    generate(os.path.join(traces[0], "generated"), 2000, 3, 16, 11, SimBoot())
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    summarize(spark, traces, str(local), bucket_ms=1000)
    # the command's terminal summary runs the report's incident pass over what Spark wrote: so does this side
    from kactor.trace.incidents import report_rows
    from spark.report import add_incidents, load_result

    add_incidents(load_result(str(local)), str(local), find=report_rows)
    assert spark.sparkContext.master == "local[2]" and spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
    r = kactor("trace", "summarize", *traces, "--out", str(cluster), "--bucket-ms", "1000", "--no-report",
               "--master", standalone.master_url)
    assert r.returncode == 0, r.stderr[-3000:]
    for name in TABLES:
        assert (cluster / f"{name}.json").read_bytes() == (local / f"{name}.json").read_bytes(), name
        assert (cluster / f"{name}.csv").read_bytes() == (local / f"{name}.csv").read_bytes(), name
    meta = {p: json.loads((p / "summary.json").read_text()) for p in (local, cluster)}
    for m in meta.values():
        for key in TIMINGS:
            m.pop(key)
    # the local run wrote the generated trace's columns cache (spark/columns.py), the cluster's read it
    columns = {p: {os.path.basename(k): v for k, v in meta[p].pop("columns").items()} for p in (local, cluster)}
    assert columns[local]["generated"] == "written" and columns[cluster]["generated"] == "cached", columns
    assert meta[cluster] == meta[local]
    assert meta[local]["messages"] == 2000 + 23 and len(meta[local]["warnings"]) == 1
    assert json.loads((local / "controller_event_times.json").read_text())  # a table with rows was compared
    # the executors ran on the cluster: the master lists the finished application with both workers' cores
    apps = [a for a in standalone.state()["completedapps"] if a["memoryperexecutor"] == 2048]
    assert [(a["name"], a["state"], a["cores"]) for a in apps] == [("kactor-trace-summary", "FINISHED", 2)]


def test_no_worker_can_take_an_executor(standalone: Any, tmp_path) -> None:
    """Executors of 4 GB, workers of 2 GB: the master can place none. Spark would wait forever (its first job
    logs "Initial job has not accepted any resources" every 15 s); the command gives up with one line."""
    trace = write_trace(str(tmp_path / "t"))
    r = kactor("trace", "summarize", trace, "--out", str(tmp_path / "o"), "--master", standalone.master_url,
               "--conf", "spark.executor.memory=4g", "--executor-timeout", "3")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        f"kactor trace: no executor registered with {standalone.master_url} within 3 s: does the master have an "
        "alive worker with 1 free core(s) and 4g of free memory? (its web UI lists them)")
    assert not os.path.exists(tmp_path / "o")
    waiting = [a for a in standalone.state()["completedapps"] if a["memoryperexecutor"] == 4096]
    assert [a["name"] for a in waiting] == ["kactor-trace-summary"]  # it was registered, then stopped


def test_the_module_is_one_xdist_group_with_the_sessions_tests() -> None:
    """Every test of this module runs on the worker that holds the SparkSession, so `standalone` starts once."""
    groups = [m.args for m in pytestmark if m.name == "xdist_group"]
    assert groups == [("spark",)]
