"""spark.load reads a writer's line from its fixed key order and any other valid line in full: both give the same
records; a line damaged where the summary reads it is an error naming the file and line."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from spark_support import BROKER_0, BROKER_1, T0, header, lines, write_trace

pytestmark = pytest.mark.spark


def _reordered(line: str) -> str:
    """The same record with its keys in another order (still valid JSON, no longer the writer's fixed order)."""
    rec = json.loads(line)
    return json.dumps({k: rec[k] for k in ("type", "payload", "cause", "receiver", "sender", "ts", "seq")})


def test_keys_in_another_order_give_the_same_tables(spark: Any, summary: dict[str, Any], tmp_path) -> None:
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"))
    path = os.path.join(folder, "broker-0.jsonl")
    body = lines(BROKER_0)
    body = [_reordered(x) if i % 3 == 0 else x for i, x in enumerate(body)]  # ZkWatchEvent, LeaderAndIsr, ...
    with open(path, "w") as f:
        f.write("\n".join([header("broker-0", 0), *body]) + "\n")
    again = summarize(spark, [folder], None, bucket_ms=1000)
    assert again["tables"] == summary["tables"]
    assert again["meta"]["messages"] == summary["meta"]["messages"] and len(again["meta"]["warnings"]) == 1


def test_damaged_observability_payload_names_the_line(spark: Any, tmp_path) -> None:
    from spark.load import TraceInputError
    from spark.summarize import summarize

    body = lines(BROKER_0)
    # line 9 of the file: a ControllerEventProcessed whose payload lost a brace; its prefix and cause are intact
    assert '"type":"ControllerEventProcessed"' in body[7]
    body[7] = body[7].replace('"queue_size":0}', '"queue_size":0', 1)
    (tmp_path / "broker-0.jsonl").write_text("\n".join([header("broker-0", 0), *body]) + "\n")
    with pytest.raises(TraceInputError, match=r"broker-0\.jsonl: line 9: corrupt trace line: not JSON"):
        summarize(spark, [str(tmp_path)], None)


def test_convert_keeps_the_payload_text_as_written(spark: Any, tmp_path) -> None:
    from spark.convert import convert

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    convert(spark, [folder], str(tmp_path / "pq"))
    got = {(r["process"], r["seq"]): r["payload"] for r in spark.read.parquet(str(tmp_path / "pq")).collect()}
    for process, records in (("broker-0", BROKER_0), ("broker-1", BROKER_1)):
        for line in lines(records):
            rec = json.loads(line)
            written = line[line.index('"payload":') + len('"payload":'):line.rindex(',"cause":')]
            assert got[(process, rec["seq"])] == written


def test_convert_reads_the_json_once_into_the_columns_cache(spark: Any, tmp_path) -> None:
    """convert parses the JSON into the columns cache beside the trace (spark/columns.py) and writes the Parquet
    from those columns; a trace converted again reads only the columns, so a payload changed in place (same size,
    same modification time: the cache's key) does not show in the second conversion."""
    from spark import columns
    from spark.convert import convert

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    convert(spark, [folder], str(tmp_path / "pq1"))
    files = [os.path.join(folder, n) for n in ("broker-0.jsonl", "broker-1.jsonl")]
    assert columns.cached_dir(folder, columns.file_key(files)) is not None
    path = files[0]
    st = os.stat(path)
    with open(path) as f:
        text = f.read()
    assert text.count('"queue_size":0}') >= 1
    with open(path, "w") as f:
        f.write(text.replace('"queue_size":0}', '"queue_size":7}'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    convert(spark, [folder], str(tmp_path / "pq2"))

    def rows(name: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / name)).collect())

    first = rows("pq1")
    assert len(first) == len(lines(BROKER_0)) + len(lines(BROKER_1))
    assert rows("pq2") == first


def test_observability_text_inside_another_payload_is_not_an_observability_record(
        spark: Any, summary: dict[str, Any], tmp_path) -> None:
    """The observed read keeps a line by the text `","type":"<observability type>","payload":` before parsing it;
    a record of another type whose payload holds that text is kept by that test and must then be dropped by type."""
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"))
    decoy = ('{"seq":21,"ts":' + repr(T0 + 7400.0) + ',"sender":"edge:zk","receiver":"controller",'
             '"type":"ZkWatchEvent","payload":{"@":"ZkWatchEvent","path":"/x","type":"ControllerGauges",'
             '"payload":{"active":true,"offline_partitions":99}},"cause":null}')
    with open(os.path.join(folder, "broker-0.jsonl"), "w") as f:
        f.write("\n".join([header("broker-0", 0), *lines(BROKER_0), decoy]) + "\n")
    again = summarize(spark, [folder], None, bucket_ms=1000)
    assert again["meta"]["messages"] == summary["meta"]["messages"] + 1
    by_type = {r["type"]: r["count"] for r in again["tables"]["messages_by_type"]}
    assert by_type["ZkWatchEvent"] == 4 and by_type["ControllerGauges"] == 2
    for name in ("gauges_timeline", "errors", "anomalies", "controller_event_times", "request_latency"):
        assert again["tables"][name] == summary["tables"][name], name
