"""`kactor chaos` refuses bad arguments with one clear line and exit 2, before starting anything."""

from __future__ import annotations

import pytest

from kactor.cli import main


@pytest.mark.parametrize(("args", "message"), [
    (["--seeds", "5-1"], "--seeds: bad seed range '5-1': seeds are non-negative and N <= M"),
    (["--seeds", "x"], "--seeds: bad seed range 'x': expected N, N-M or a comma-separated list"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--brokers", "1"], "--brokers must be between 2 and 9"),
    (["--zookeeper-ensemble", "2"], "--zookeeper-ensemble must be an odd number of at least 3"),
    (["--session-timeout-ms", "500"], "--session-timeout-ms must be at least 1000"),
])
def test_bad_arguments(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["chaos", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("kactor chaos: error: ") and message in err and err.count("\n") == 1
