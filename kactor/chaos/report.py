"""What `kactor chaos` prints: a progress bar while it runs, one line per seed, the violations and the replay command
of a failing seed, and the summary. Beside the invariants' counts, each seed line and the summary show the three
figures of issue #26: the longest acknowledgement gap against its bound, the records written twice, the
UNKNOWN_SERVER_ERROR answers; where the transaction checker ran (kactor/chaos/txn_check.py), its anomalies
(sim/txn_checker.py's table) too."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from kactor.chaos.replay import replay_command
from kactor.chaos.runner import SeedResult

KINDS = (("safety", "safety violations"), ("lost", "lost records"), ("divergent", "divergent records"),
         ("stuck", "stuck operations"), ("txn", "transaction violations"))
SHOWN_VIOLATIONS = 10
__all__ = ["KINDS", "Progress", "replay_command", "seed_lines", "summary_lines"]


def _gap(r: SeedResult) -> str:
    if r.longest_gap_s is None:
        return "gap -"
    return f"gap {r.longest_gap_s:.1f}/{r.gap_bound_s:.1f} s"


def _faults(faults: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(faults.items())) or "none"


def seed_lines(r: SeedResult, brokers: int, zk_servers: int) -> list[str]:
    counts = "  ".join(f"{kind} {r.count(kind)}" for kind, _ in KINDS)
    if r.txn_outcomes is not None:
        counts += f"  anomalies {r.count('anomaly')}" + (f" (+{r.known_anomalies} known)" if r.known_anomalies else "")
    status = "ok  " if r.ok else "FAIL"
    lines = [f"seed {r.seed:<4} {status}  {r.steps} steps, {sum(r.faults.values())} faults, {r.acked} acked  "
             f"{counts}  {_gap(r)}  duplicates {r.count('duplicate')}"
             + (f" (+{r.client_resends} re-sent by the client)" if r.client_resends else "")
             + "  unknown-server-error "
             f"{r.count('server-error')}  {r.duration_s:.1f} s"]
    if r.error:
        lines.append(f"  the run failed: {r.error}")
    others = [v for v in r.violations if v.kind != "anomaly" or r.anomaly_table is None]
    for v in others[:SHOWN_VIOLATIONS]:
        lines.append(f"  {v.kind}: {v.detail}")
    if len(others) > SHOWN_VIOLATIONS:
        lines.append(f"  ... {len(others) - SHOWN_VIOLATIONS} more in {r.folder}/result.json")
    if r.anomaly_table is not None:  # the checker's own table, its replay line the seed's
        lines += [line for line in r.anomaly_table.splitlines() if not line.lstrip().startswith("replay: ")]
    if not r.ok:
        lines.append(f"  kept: {r.folder} (events.log, result.json, traces/, cluster/)")
        lines.append(f"  replay: {replay_command(r.seed, r.steps, brokers, zk_servers)}")
    return lines


def summary_lines(results: Sequence[SeedResult], total_s: float) -> list[str]:
    if not results:
        return ["no seed ran"]
    faults: dict[str, int] = {}
    for r in results:
        for k, v in r.faults.items():
            faults[k] = faults.get(k, 0) + v
    failed = [r.seed for r in results if not r.ok]
    totals = ", ".join(f"{sum(r.count(kind) for r in results)} {label}" for kind, label in KINDS)
    per_seed = [r.duration_s for r in results]
    measured = [r for r in results if r.longest_gap_s is not None]
    worst = max(measured, key=lambda r: r.longest_gap_s or 0.0, default=None)
    gap = "longest acknowledgement gap -" if worst is None else \
        (f"longest acknowledgement gap {worst.longest_gap_s:.1f} s (seed {worst.seed}; bound {worst.gap_bound_s:.1f} s"
         f", {sum(r.count('gap') for r in results)} over it)")
    # the checker's line first: the five lines from "N seeds x" on are the summary scripts read (the last five)
    lines = [*_checker_lines(results),
             f"{len(results)} seeds x {results[0].steps} steps: {totals}",
             f"faults: {_faults(faults)}",
             f"acknowledged records checked: {sum(r.acked for r in results)}; {gap}, "
             f"{sum(r.count('duplicate') for r in results)} duplicated records, "
             f"{sum(r.count('server-error') for r in results)} UNKNOWN_SERVER_ERROR answers",
             f"{len(results) - len(failed)} seeds clean" + (f", {len(failed)} failed: "
                                                            f"{', '.join(map(str, failed))}" if failed else ""),
             f"time: {total_s:.0f} s in all, {statistics.median(per_seed):.1f} s per seed (median; "
             f"{min(per_seed):.1f}-{max(per_seed):.1f})"]
    errors = [r.seed for r in results if r.error]
    if errors:
        lines.append(f"runs that failed to complete: {', '.join(map(str, errors))}")
    return lines


def _checker_lines(results: Sequence[SeedResult]) -> list[str]:
    """The transaction checker's line: its transactions by outcome and its anomalies by kind, over the seeds it ran
    on (none: no line)."""
    checked = [r for r in results if r.txn_outcomes is not None]
    if not checked:
        return []
    outcomes = {o: sum((r.txn_outcomes or {}).get(o, 0) for r in checked) for o in ("committed", "aborted", "unknown")}
    kinds: dict[str, int] = {}
    for r in checked:
        for v in r.violations:
            if v.kind == "anomaly":
                kind = v.detail.split(":", 1)[0]
                kinds[kind] = kinds.get(kind, 0) + 1
    anomalies = sum(kinds.values())
    known = [r.seed for r in checked if r.known_anomalies]
    return [f"transactions checked (sim/txn_checker.py) on {len(checked)} seeds: {outcomes['committed']} committed, "
            f"{outcomes['aborted']} aborted, {outcomes['unknown']} unknown, {sum(r.delays for r in checked)} of "
            f"their connections held past their request timeout; {anomalies} anomalies"
            + (f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else "")
            + (f"; {sum(r.known_anomalies for r in checked)} known for 2.6 clients (KIP-890 part 2: an EndTxn the "
               f"client gave up on landing in its next transaction) in seeds {', '.join(map(str, known))}"
               if known else "")]


class Progress:
    """A one-line bar on a terminal (redrawn in place); elsewhere a line at most every 30 s."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total = max(1, total)
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def update(self, done: int, label: str) -> None:
        now = time.monotonic()
        if not self.tty and now - self._last < 30:
            return
        self._last = now
        filled = self.width * done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        text = f"[{bar}] {done}/{self.total} steps  {label}  {now - self.t0:.0f} s"
        if self.tty:
            self.stream.write("\r\x1b[2K" + text)
            self._shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def clear(self) -> None:
        """Before a line of output: a terminal's bar is wiped (and redrawn on the next update)."""
        if self.tty and self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._shown = False
