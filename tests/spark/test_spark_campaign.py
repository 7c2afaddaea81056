"""A `kactor sim` campaign folder (DIR/seed-N/<process>.jsonl: each failing seed's traces, kactor/cli/cmd_sim.py)
summarised as one trace: every seed's processes, named apart by their seed folder (seed-2/broker-0), each counted
as its own file's records; a seed folder summarised on its own keeps its processes' own names, read from the same
columns cache; an ordinary trace folder's names are its files' names, as before."""

from __future__ import annotations

import os
from typing import Any

import pytest
from spark_support import write_trace

pytestmark = pytest.mark.spark

SEEDS = (2, 10)  # seed-2 sorts after seed-10 as text: discovered in seed order all the same
STEPS = 6


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two seeds' traces laid out as `kactor sim --trace-dir DIR` lays out its failing seeds' (DIR/seed-N/)."""
    from kactor.sim_boot import SimBoot
    from sim.run import run_seed

    root = str(tmp_path_factory.mktemp("campaign"))
    for seed in SEEDS:
        run_seed(seed, STEPS, SimBoot(), trace_dir=os.path.join(root, f"seed-{seed}"))
    return root


def _records(root: str) -> dict[str, int]:
    """Each seed folder's files' records (their lines but the header), by ``seed-N/<file name without .jsonl>``."""
    out = {}
    for seed in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, seed))):
            if name.endswith(".jsonl"):
                with open(os.path.join(root, seed, name), encoding="utf-8") as f:
                    out[f"{seed}/{name.removesuffix('.jsonl')}"] = sum(
                        1 for line in f if not line.startswith('{"trace_version"'))
    return out


def test_campaign_folder_names_each_process_by_its_seed(campaign: str, tmp_path) -> None:
    from spark.load import discover

    got = [tf.process for tf in discover([campaign]).jsonl]
    seeds_first = [p.split("/")[0] for p in got]
    assert seeds_first == sorted(seeds_first, key=lambda s: int(s.removeprefix("seed-")))  # seed-2 before seed-10
    assert sorted(got) == sorted(_records(campaign)) and len(set(got)) == len(got)
    assert {s.removeprefix("seed-") for s in seeds_first} == {str(s) for s in SEEDS}
    # a seed folder, or several, given as such: the names of their files, as for any trace folder
    seed_dirs = [os.path.join(campaign, f"seed-{s}") for s in SEEDS]
    assert {tf.process for tf in discover(seed_dirs).jsonl} == {p.split("/")[1] for p in got}
    assert [tf.process for tf in discover([write_trace(str(tmp_path / "t"))]).jsonl] == ["broker-0", "broker-1"]
    # nothing a level down, or a folder holding neither: no trace files, as before
    os.makedirs(tmp_path / "empty" / "seed-1")
    from spark.load import TraceInputError

    with pytest.raises(TraceInputError, match="no trace files"):
        discover([str(tmp_path / "empty")])


def test_campaign_incidents_are_found_one_seed_at_a_time(campaign: str) -> None:
    """The report's incidents (kactor/trace/incidents/, no Spark): each seed's own, its subjects after its seed."""
    from kactor.trace.incidents import find_incidents, report_rows
    from spark.report import incident_tables

    warnings: list[str] = []
    got = incident_tables([campaign], 1000, [], warnings, report_rows)
    assert warnings == []
    seeds = {s: find_incidents([os.path.join(campaign, f"seed-{s}")]) for s in SEEDS}
    want = [f"seed-{s}: {i.subject}" for s, f in seeds.items() for i in f.incidents]
    assert [r["subject"] for r in got["incidents"]] == want
    assert {w.split(":")[0] for w in want} == {f"seed-{s}" for s in SEEDS}  # a controller elected in each
    # the errors once per answer, added up over the seeds
    assert sum(r["answers"] for r in got["error_answers"]) == sum(e.requests for f in seeds.values()
                                                                  for e in f.errors)


def test_campaign_summary_counts_each_seeds_files_apart(spark: Any, campaign: str) -> None:
    from spark import columns
    from spark.load import discover
    from spark.summarize import summarize

    records = _records(campaign)
    got = summarize(spark, [campaign], None, bucket_ms=1000)
    assert {r["process"]: r["messages"] for r in got["tables"]["messages_by_process"]} == records
    assert got["meta"]["processes"] == sorted(records) and got["meta"]["messages"] == sum(records.values())
    # one columns cache per seed folder, committed
    assert got["meta"]["columns"] == {os.path.join(campaign, f"seed-{s}"): "written" for s in SEEDS}
    # a seed folder summarised on its own reads that cache, its processes named by their files alone
    dirs = columns.prepare(spark, discover([os.path.join(campaign, "seed-2")]))
    assert [(d.cached, d.prefix) for d in dirs] == [(True, "")]
    counts = {r["process"]: r["count"] for r in columns.frame(spark, dirs[0]).groupBy("process").count().collect()}
    assert counts == {p.removeprefix("seed-2/"): n for p, n in records.items() if p.startswith("seed-2/")}
