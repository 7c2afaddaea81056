"""``kactor bench`` (bench/cli.py): the controller workloads keep their flags; the data-path benches refuse bad flags
with one line and exit 2, before starting anything."""

from __future__ import annotations

import pytest

from kactor.cli import build_parser, main


@pytest.mark.parametrize("argv, message", [
    (["bench", "produce", "--targets", "kafka"],
     "--targets: kafka; choose from kactor, tansu, ceiling, kactor-traced, kactor-sasl-ssl"),
    (["bench", "produce", "--records", "0"], "--records, --runs and --partitions must be >= 1"),
    (["bench", "produce", "--max-seconds", "0"], "--max-seconds must be > 0"),
    (["bench", "fetch", "--targets", "ceiling"], "--targets: ceiling; choose from kactor, tansu"),
    (["bench", "fetch", "--fetch-queue-backoff-ms", "-1"], "--fetch-queue-backoff-ms must be >= 0"),
    (["bench", "e2e-latency", "--runs", "0"], "--records, --runs and --partitions must be >= 1"),
    (["bench", "e2e-latency", "--warm-up", "-1"], "--warm-up must be >= 0"),
])
def test_bad_flags_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"kactor bench: {message}"]


def test_controller_workloads_keep_their_flags() -> None:
    argv = ["bench", "failover", "--scale", "0.5", "--runs", "2", "--tmpfs", "--no-doc"]
    args = build_parser(argv).parse_args(argv)
    assert (args.name, args.scale, args.runs, args.tmpfs, args.no_doc) == ("failover", 0.5, 2, True, True)


def test_data_path_benches_have_their_flags() -> None:
    argv = ["bench", "produce", "--records", "10", "--targets", "tansu", "--trace"]
    args = build_parser(argv).parse_args(argv)
    assert (args.name, args.records, args.targets, args.trace, args.partitions) == ("produce", 10, "tansu", True, 3)
    # librdkafka's own 1000 ms would measure its one-second pause whenever its pre-fetch queue is full
    assert build_parser(["bench", "fetch"]).parse_args(["bench", "fetch"]).fetch_queue_backoff_ms == 10
