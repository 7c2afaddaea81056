"""docs/testing.md's python code blocks are a test session of their own: each block is written to a test file in a
folder outside the checkout and the lot run by plain ``pytest`` with this suite's interpreter (kactor installed in it,
so the plugin comes from its pytest11 entry point), as a reader who copies them would. kafka-python is the suite's
kafka-python 3 (scripts/setup's .venv-clients/kafka-python3; .venv's own is the 1.4 that kafka-utils pins). A doc
snippet that no longer runs against kactor.testing fails here, naming the block."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "testing.md"
KAFKA_PYTHON3 = Path(sys.prefix).parent / ".venv-clients" / "kafka-python3"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def doc_blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_shows_every_client_it_names() -> None:
    text = "\n".join(doc_blocks())
    for client in ("from confluent_kafka", "from kafka import", "from aiokafka", "from faststream.kafka"):
        assert client in text, client


@pytest.mark.slow
@pytest.mark.cluster
def test_the_docs_snippets_pass_against_the_plugin(tmp_path: Path) -> None:
    if not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.skip(f"kafka-python 3 is not installed in {KAFKA_PYTHON3} (scripts/setup)")
    blocks = doc_blocks()
    tests = 0
    for i, block in enumerate(blocks):
        (tmp_path / f"test_doc_block_{i}.py").write_text(block, encoding="utf-8")
        tests += len(re.findall(r"^def test_", block, re.M))
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # this folder is the rootdir
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTHONHOME")}
    env["PYTHONPATH"] = str(KAFKA_PYTHON3)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    out = "\n".join(line for line in run.stdout.splitlines() if not line.startswith("%"))  # librdkafka's log lines
    assert run.returncode == 0, out[-6000:] + run.stderr[-2000:]
    assert f"{tests} passed" in out, out[-3000:]
