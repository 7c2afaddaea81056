"""``kactor bench txn-produce``: its flags (bad ones refused with one line); at a tiny size on a real cluster, both
ways and the ratio are printed (never a timing asserted)."""

from __future__ import annotations

import re

import pytest

from kactor.cli import main


def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "txn-produce", "--per-txn", "0"]) == 2
    assert "--per-txn" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.cluster
def test_the_txn_produce_bench_reports_both_ways_and_their_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "txn-produce", "--records", "600", "--per-txn", "100", "--partitions", "1", "--runs", "1",
                 "--no-doc"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  idempotent +[\d.]+ MB/s +[\d,]+ records/s \(600 records in", out, re.M)
    assert re.search(r"^  transactional +[\d.]+ MB/s +[\d,]+ records/s \(600 records in", out, re.M)
    assert re.search(r"^ratio transactional/idempotent: [\d.]+ \(medians; per run [\d.]+\)$", out, re.M)
    # the same transactions against a cluster with transaction.partition.verification.enable=false (issue #40)
    assert re.search(r"^  unverified +[\d.]+ MB/s +[\d,]+ records/s \(600 records in", out, re.M)
    assert re.search(r"^ratio verification on/off: [\d.]+ \(medians; per run [\d.]+\)$", out, re.M)


def test_the_verified_cluster_asks_for_verification_and_the_other_turns_it_off(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """kactor's brokers default to transaction.partition.verification.enable=false (2.6.3 has none): the ratio
    verification on/off compares two clusters only if the first is told to verify."""
    import bench.txn_produce as txn_produce

    made: list[tuple[str, ...]] = []

    class StartedError(Exception):
        pass

    class FakeTarget:
        def __init__(self, overrides: tuple[str, ...] = ()) -> None:
            made.append(tuple(overrides))

        def stop(self) -> None:
            pass

    def start_together(*targets: object) -> None:
        raise StartedError

    monkeypatch.setattr(txn_produce, "KactorTarget", FakeTarget)
    monkeypatch.setattr(txn_produce, "start_together", start_together)
    with pytest.raises(StartedError):
        main(["bench", "txn-produce", "--records", "1", "--runs", "1", "--no-doc"])
    assert made == [("transaction.partition.verification.enable=true",),
                    ("transaction.partition.verification.enable=false",)]
