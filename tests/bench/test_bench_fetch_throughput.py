"""``python -m bench.fetch_throughput`` at a tiny size: every record produced is read back (the bench checks
order, gaps and bytes itself, and fails otherwise), and the output has its figures."""

from __future__ import annotations

import re

import pytest

from bench.fetch_throughput import main

pytestmark = pytest.mark.slow


def test_fetch_bench_reads_every_record_back(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--targets", "tansu", "--records", "2000", "--partitions", "2", "--runs", "2", "--no-doc"]) == 0
    out = capsys.readouterr().out
    assert "tansu: 2,000 records produced (acks=all)" in out
    runs = re.findall(r"  tansu +[\d,.]+ MB/s +[\d,]+ records/s  \(([\d,]+) records in", out)
    assert runs == ["2,002", "2,002"]  # each run read all, the one warm-up record per partition included
    assert re.search(r"^tansu   : [\d,.]+ \(min .*n=2\) MB/s", out, re.M)
