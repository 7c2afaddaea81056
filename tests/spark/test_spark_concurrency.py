"""The summary's concurrent parts: the observed read runs beside the count, the tables' queries from several
threads. Results must not depend on it, and an error in the count must not leave the observed read running."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import pytest
from spark_support import BROKER_0, header, lines, write_trace

pytestmark = pytest.mark.spark


def test_tables_from_one_thread_equal_the_threaded_ones(spark: Any, summary: dict[str, Any], handcrafted: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import spark.summarize as summarize_module

    monkeypatch.setattr(summarize_module, "compute", functools.partial(summarize_module.compute, threads=1))
    again = summarize_module.summarize(spark, [handcrafted], None, bucket_ms=1000)
    assert again["tables"] == summary["tables"]


def test_count_error_cancels_the_observed_read(spark: Any, tmp_path) -> None:
    from spark.load import TraceInputError
    from spark.summarize import summarize

    body = lines(BROKER_0)
    body[2] = body[2][:40]  # line 4: cut short in the middle of the file, which the count reports
    (tmp_path / "broker-0.jsonl").write_text("\n".join([header("broker-0", 0), *body]) + "\n")
    with pytest.raises(TraceInputError, match=r"broker-0\.jsonl: line 4: corrupt trace line"):
        summarize(spark, [str(tmp_path)], None)
    tracker = spark.sparkContext.statusTracker()
    assert tracker.getActiveJobsIds() == [] and tracker.getActiveStageIds() == []
    assert spark.sparkContext._jsc.sc().getPersistentRDDs().size() == 0  # its cache dropped too


def test_slow_line_and_damaged_payload_in_one_trace(spark: Any, summary: dict[str, Any], tmp_path) -> None:
    """A line in another key order is read apart, after the count; a damaged observability payload elsewhere is
    still found (the observed read beside the count, and the slow lines' read after it, are both checked)."""
    from spark.load import TraceInputError
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"))
    path = os.path.join(folder, "broker-0.jsonl")
    body = lines(BROKER_0)
    rec = json.loads(body[0])
    body[0] = json.dumps({k: rec[k] for k in ("type", "payload", "cause", "receiver", "sender", "ts", "seq")})
    with open(path, "w") as f:
        f.write("\n".join([header("broker-0", 0), *body]) + "\n")
    again = summarize(spark, [folder], None, bucket_ms=1000)
    assert again["tables"] == summary["tables"]
    assert '"type":"ControllerEventProcessed"' in body[7]
    body[7] = body[7].replace('"queue_size":0}', '"queue_size":0', 1)
    with open(path, "w") as f:
        f.write("\n".join([header("broker-0", 0), *body]) + "\n")
    with pytest.raises(TraceInputError, match=r"broker-0\.jsonl: line 9: corrupt trace line: not JSON"):
        summarize(spark, [folder], None, bucket_ms=1000)
