"""``kactor bench cleaner`` at a tiny size: it completes and prints both throughputs and both group loads (never a
timing asserted); bad flags are refused with one line."""

from __future__ import annotations

import pytest

from kactor.cli import main


def test_the_cleaner_bench_reports_both_ways_and_the_group_loads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "cleaner", "--mb", "2", "--keys", "500", "--commits", "3000", "--runs", "1",
                 "--no-doc"]) == 0
    out = capsys.readouterr().out
    for label in ("cleaner          :", "read-and-rewrite :", "ratio            :", "group load       :"):
        assert label in out
    assert "uncompacted" in out and "compacted" in out


def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "cleaner", "--runs", "0"]) == 2
    assert "--runs >= 1" in capsys.readouterr().err
