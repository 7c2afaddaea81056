"""The errors table counted in Python from the anomalies' rows (spark.summarize._errors, the default) equals the
errors grouped by a Spark query of their own (``queries(errors_query=True)``, how it was computed before), on the
handcrafted trace and on a generated one; and the anomalies' bulk collection rounds only the double columns, as the
generic rounding of every value did."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from spark_support import write_trace

pytestmark = pytest.mark.spark


def _both(spark: Any, folder: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    import spark.summarize as summ

    counted = summ.summarize(spark, [folder], None, bucket_ms=1000)
    monkeypatch.setattr(summ, "compute", functools.partial(summ.compute, errors_query=True))
    grouped = summ.summarize(spark, [folder], None, bucket_ms=1000)
    return counted, grouped


@pytest.mark.parametrize("kind", ["handcrafted", "generated"])
def test_errors_counted_from_anomalies_equal_the_spark_query(spark: Any, tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                             kind: str) -> None:
    if kind == "handcrafted":
        folder = write_trace(str(tmp_path / "t"), truncated=False)
    else:
        from kactor.sim_boot import SimBoot
        from sim.generate import generate

        folder = str(tmp_path / "g")
        generate(folder, 3000, brokers=3, partitions=16, seed=3, boot=SimBoot())
    counted, grouped = _both(spark, folder, monkeypatch)
    assert grouped["tables"]["errors"], "the trace has errors to count"
    assert counted["tables"] == grouped["tables"]
    assert sum(r["count"] for r in counted["tables"]["errors"]) == sum(
        1 for r in counted["tables"]["anomalies"] if r["kind"] in ("error", "stale_controller_epoch"))


def test_bulk_rows_round_only_doubles_as_the_generic_rounding(spark: Any) -> None:
    from spark.summarize import _finish, _rows, _rows_bulk

    rows = [("a", 1, 1.23456, None, 2.0005), ("b", None, None, 7.5, 1e-7), (None, 3, 0.0005, -1.2345678, 12.0)]
    df = spark.createDataFrame(rows, "s string, n long, x double, y double, z double").repartition(2)
    order = ["s", "n"]
    want = _finish([r.asDict() for r in df.collect()], order)
    assert _rows_bulk(df, order) == want == _rows(df, order)
    assert [r["x"] for r in want] == [round(0.0005, 3), 1.235, None]  # null first, then "a", "b"
