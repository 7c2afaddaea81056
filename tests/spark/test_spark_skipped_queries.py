"""A table query that reads only record types the trace does not hold is not run (spark.summarize.queries'
``types``, the count's types): the tables equal those with every query run, on a generated trace (no topic
deletions, no reassignments: two queries skipped) and on the handcrafted one (every type: none skipped)."""

from __future__ import annotations

from typing import Any

import pytest
from spark_support import write_trace

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("kind", ["handcrafted", "generated"])
def test_tables_equal_with_every_query_run(spark: Any, tmp_path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    import spark.summarize as summ

    if kind == "handcrafted":
        folder, skipped = write_trace(str(tmp_path / "t"), truncated=False), set()
    else:
        from kactor.sim_boot import SimBoot
        from sim.generate import generate

        folder, skipped = str(tmp_path / "g"), {"topic_deletions", "reassignments"}
        generate(folder, 3000, brokers=3, partitions=16, seed=3, boot=SimBoot())
    original = summ.queries
    built: dict[str, set[str]] = {}

    def spy(obs: Any, bucket_ms: Any, errors_query: bool = False, types: Any = None) -> Any:
        qs = original(obs, bucket_ms, errors_query, types if built.get("mode") == "skip" else None)
        built[built["mode"]] = {name for name, _, _ in qs}
        return qs

    monkeypatch.setattr(summ, "queries", spy)
    built["mode"] = "skip"
    skipping = summ.summarize(spark, [folder], None, bucket_ms=1000)
    built["mode"] = "all"
    every = summ.summarize(spark, [folder], None, bucket_ms=1000)
    assert built["all"] == set(summ.QUERY_NAMES)
    assert built["all"] - built["skip"] == skipped
    assert skipping["tables"] == every["tables"]
    for name in skipped:
        assert every["tables"][name] == []
