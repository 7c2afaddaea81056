"""What a broker process imports before it registers (issue #41: a 3-broker test cluster ready in ≤ 5 s on 2 cores,
where each broker's imports were most of its CPU before registration): kafka-server-start's path
(`BrokerProcess.run`) leaves hypothesis unimported, which kio's phantom types otherwise import and drive (a strategy
registered per type) whenever it is importable; a process that runs tests and calls `BrokerProcess.start` keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zk_bridge.server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reported importing."""
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_the_broker_process_imports_the_wire_schemas_without_hypothesis(tmp_path: Path) -> None:
    # nothing listens on the port: the broker imports its edges (kio's schemas among them), then fails to connect
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kactor", "broker", "--log-level", "ERROR",
         "--override", "broker.id=0", "--override", f"zookeeper.connect=127.0.0.1:{free_port()}",
         "--override", "zookeeper.connection.timeout.ms=300", "--override", "listeners=PLAINTEXT://127.0.0.1:0",
         "--override", f"log.dirs={tmp_path / 'log'}"],
        cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED="0"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "cannot reach ZooKeeper" in done.stderr
    imported = _imported(done.stderr)
    assert {"kio.static.primitive", "edges.transport"} <= imported
    # kio's ``import hypothesis.strategies`` is still tried (importtime lists the attempt): it finds no hypothesis
    assert not {m for m in imported if m.startswith("hypothesis.")} - {"hypothesis.strategies"}
    assert "hypothesis" not in imported


def test_a_process_calling_start_keeps_hypothesis(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from kactor.broker_process import BrokerProcess, BrokerStartError\n"
        "from kactor.config import build_config\n"
        f"cfg = build_config({{'broker.id': '0', 'zookeeper.connect': '127.0.0.1:{free_port()}', "
        "'zookeeper.connection.timeout.ms': '300', 'listeners': 'PLAINTEXT://127.0.0.1:0', "
        f"'log.dirs': {str(tmp_path / 'log')!r}}})\n"
        "try:\n"
        "    BrokerProcess(cfg).start()\n"
        "except BrokerStartError:\n"
        "    pass\n"
        "assert 'kio.static.primitive' in sys.modules\n"
        "import hypothesis.strategies\n"
        "print(hypothesis.strategies.integers().example() is not None)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED="0"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
