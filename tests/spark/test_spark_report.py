"""The HTML report: index.html references every PNG, and each PNG has sane pixel dimensions."""

from __future__ import annotations

import os
import struct
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


def test_report_files(summary: dict[str, Any]) -> None:
    from kactor.trace.incidents import report_rows
    from spark.report import PLOTS, build_report

    out = summary["out"]
    index = build_report(out, summary, find=report_rows)
    assert index == os.path.join(out, "index.html")
    with open(index, encoding="utf-8") as f:
        page = f.read()
    for name in PLOTS:
        assert f'src="{name}"' in page
        w, h = png_size(os.path.join(out, name))
        assert 300 <= w <= 4000 and 200 <= h <= 4000, (name, w, h)
    assert png_size(os.path.join(out, "event_queue_time.png")) == (900, 400)
    for text in ("BrokerChange", "STALE_CONTROLLER_EPOCH", "payments", "truncated last line", "messages_by_type.csv"):
        assert text in page


def test_report_rebuilds_from_written_tables(summary: dict[str, Any]) -> None:
    from kactor.trace.incidents import report_rows
    from spark.report import build_report, load_result
    from spark.summarize import TABLES

    again = load_result(summary["out"])
    # Spark's tables as Spark wrote them; the report's incident pass rewrites gauges_timeline with its
    # under-replicated and offline series filled from the intervals, and adds tables of its own
    spark_tables = set(TABLES) - {"gauges_timeline"}
    assert {k: again["tables"][k] for k in spark_tables} == {k: summary["tables"][k] for k in spark_tables}
    assert os.path.exists(build_report(summary["out"], find=report_rows))


def test_terminal_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console

    from kactor.trace.incidents import report_rows
    from spark.report import print_summary

    console = Console(record=True, width=120)
    print_summary(summary, summary["out"], console=console, find=report_rows)
    text = console.export_text()
    assert "23 messages from 2 process(es)" in text
    assert "OfflinePartition/unclean: 1" in text
    assert "slow_event: 1" in text and "warning:" in text
