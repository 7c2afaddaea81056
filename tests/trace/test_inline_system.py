"""kactor.trace.inline_system delivers in thespian simpleSystemBase's order: on a recorded broker trace (every
message the replayed actors receive, in order, byte for byte) and on what kactor's actors rarely reach (a failing
handler's retries and poison, an actor asked to exit, its children, messages to a dead actor)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

from thespian.actors import Actor, ActorExitRequest, ActorSystem, ChildActorExited, PoisonMessage

from kactor.trace.inline_system import InlineActorSystem

HERE = os.path.dirname(os.path.abspath(__file__))

LOG: list[tuple[str, str]] = []  # (actor label, what it received), in delivery order


def _describe(msg: Any) -> str:
    if isinstance(msg, PoisonMessage):
        return f"poison({_describe(msg.poisonMessage)})"
    if isinstance(msg, ChildActorExited):
        return "child-exited"
    if isinstance(msg, ActorExitRequest):
        return "exit"
    return repr(msg)


class Recorder(Actor):
    """Logs every message; acts on a few scripted ones."""

    def __init__(self) -> None:
        super().__init__()
        self.label = "?"
        self.children: dict[str, Any] = {}
        self.failures: dict[str, int] = {}

    def receiveMessage(self, msg: Any, sender: Any) -> None:  # noqa: N802 - thespian's name
        if isinstance(msg, tuple) and msg[0] == "label":
            self.label = msg[1]
            return
        LOG.append((self.label, _describe(msg)))
        if not isinstance(msg, tuple):
            return
        op = msg[0]
        if op == "spawn":  # ("spawn", name, ...messages to send it after its label)
            addr = self.createActor(Recorder)
            self.children[msg[1]] = addr
            self.send(addr, ("label", msg[1]))
            for m in msg[2:]:
                self.send(addr, m)
        elif op == "to":  # ("to", child, message)
            self.send(self.children[msg[1]], msg[2])
        elif op == "exit":  # ("exit", child)
            self.send(self.children[msg[1]], ActorExitRequest())
        elif op == "fail":  # ("fail", key, times): raise on the first `times` deliveries
            n = self.failures.get(msg[1], 0)
            self.failures[msg[1]] = n + 1
            if n < msg[2]:
                raise RuntimeError(f"scripted failure {n + 1}")
        elif op == "self":  # ("self", message): a send to itself
            self.send(self.myAddress, msg[1])


SCRIPT = [
    ("top", ("spawn", "a", ("x", 1), ("spawn", "a1", ("y", 1)), ("x", 2))),
    ("top", ("spawn", "b", ("fail", "k", 2), ("x", 3))),  # two failures, then it succeeds: retried at the end
    ("top", ("to", "b", ("fail", "p", 9))),  # always fails: poison back to top after three attempts
    ("top", ("self", ("z", 1))),
    ("top", ("exit", "a")),  # a exits; top learns it; a's child a1 is asked to exit then
    ("top", ("to", "a", ("late", 1))),  # to a dead actor: dropped
    ("top", ("spawn", "c", ("x", 4))),
    ("top", ActorExitRequest()),  # the top-level actor itself: its children are asked to exit
    ("top", ("x", 5)),  # dead: dropped
]


def _run(system: Any) -> list[tuple[str, str]]:
    LOG.clear()
    top = system.createActor(Recorder)
    system.tell(top, ("label", "top"))
    for _, msg in SCRIPT:
        system.tell(top, msg)
    out = list(LOG)
    LOG.clear()
    return out


def test_same_order_as_simple_system_base_on_retries_exits_and_children() -> None:
    import logging

    logging.disable(logging.CRITICAL)  # both systems log the scripted failures
    try:
        asys = ActorSystem("simpleSystemBase", logDefs=False, transientUnique=True)
        try:
            expected = _run(asys)
        finally:
            asys.shutdown()
        inline = InlineActorSystem()
        got = _run(inline)
        inline.shutdown()
    finally:
        logging.disable(logging.NOTSET)
    assert got == expected
    # the script reaches what it is meant to
    assert ("top", "poison(('fail', 'p', 9))") in got
    assert got.count(("b", "('fail', 'k', 2)")) == 3
    assert ("a1", "exit") in got and ("c", "exit") in got
    assert not any(what.startswith("('late'") or what == "('x', 5)" for _, what in got)


def test_replay_on_the_inline_system_delivers_as_simple_system_base(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    """Each replayed runtime records its own trace: every message its actors received, in order. The two are the
    same bytes (apart from the header), and both replays matched the recording message for message."""
    from kactor.hashseed import SEED

    proc = subprocess.run([sys.executable, os.path.join(HERE, "inline_order_job.py"), recorded_trace, str(tmp_path)],
                          capture_output=True, text=True, timeout=180, env=dict(os.environ, PYTHONHASHSEED=SEED))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["thespian"]["identical"] and report["inline"]["identical"], report
    assert report["thespian"] == report["inline"]
    # the replayed log dirs are scratch folders of their own (kactor.trace.replay._scratch_dir)
    scratch = re.compile(r"kactor-replay-[^/\"]+")
    with open(tmp_path / "thespian.jsonl", encoding="utf-8") as f:
        on_thespian = scratch.sub("SCRATCH", f.read().split("\n", 1)[1])
    with open(tmp_path / "inline.jsonl", encoding="utf-8") as f:
        on_inline = scratch.sub("SCRATCH", f.read().split("\n", 1)[1])
    assert on_thespian.count("\n") == report["inline"]["compared"] > 0
    assert on_inline == on_thespian
