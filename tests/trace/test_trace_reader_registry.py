"""A trace reader knows every message type a broker process can record."""

from __future__ import annotations

import json
import subprocess
import sys

_TYPES = "from messages.registry import registered_types; import json; print(json.dumps(sorted(registered_types())))"


def _types_after(imports: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{imports}\n{_TYPES}"], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_ensure_registered_knows_every_type_a_broker_process_registers() -> None:
    # a reader process (kactor trace show / replay / spark) imports only the reader; a broker imports every actor
    in_broker = _types_after("import kactor.broker_process, actors.broker, edges.transport")
    in_reader = _types_after("from kactor.trace.reader import ensure_registered; ensure_registered()")
    assert {"JoinGroupRequest", "LeadershipChange", "ProducePartition"} & in_broker  # the check has teeth
    assert in_broker - in_reader == set()
