"""`kactor trace convert` writes Parquet with the trace schema; summarising it gives the same tables."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from kactor.cli import main

pytestmark = pytest.mark.spark


def test_parquet_round_trip(spark: Any, handcrafted: str, summary: dict[str, Any], tmp_path, capsys) -> None:
    from spark.load import PARQUET_META
    from spark.schema import TRACE_SCHEMA
    from spark.summarize import summarize

    pq = str(tmp_path / "parquet")
    assert main(["trace", "convert", handcrafted, "--out", pq]) == 0
    out = capsys.readouterr().out
    assert "wrote 23 messages of 2 process(es)" in out and "truncated last line" in out
    assert any(n.endswith(".parquet") for n in os.listdir(pq))
    with open(os.path.join(pq, PARQUET_META)) as f:
        assert [h["process"] for h in json.load(f)["headers"]] == ["broker-0", "broker-1"]
    df = spark.read.parquet(pq)
    assert df.schema == TRACE_SCHEMA
    assert df.count() == 23
    again = summarize(spark, [pq], None, bucket_ms=1000)
    assert again["tables"] == summary["tables"]


def test_parquet_with_unknown_version_is_refused(spark: Any, handcrafted: str, tmp_path, capsys) -> None:
    from spark.load import PARQUET_META

    pq = str(tmp_path / "parquet")
    assert main(["trace", "convert", handcrafted, "--out", pq]) == 0
    meta_path = os.path.join(pq, PARQUET_META)
    with open(meta_path) as f:
        meta = json.load(f)
    meta["headers"][0]["trace_version"] = 9
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    capsys.readouterr()
    assert main(["trace", "summarize", pq, "--out", str(tmp_path / "o")]) == 1
    assert "unsupported trace_version 9" in capsys.readouterr().err
