"""``kactor trace show TRACE_DIR [--process NAME | --broker N] [--follow-cause SEQ [--effects]] [--type T ...]
[--partition TOPIC-P] [--limit N] [--json]``: list a trace's messages, or the cause chain behind one of them."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from kactor.cli import CliError

if TYPE_CHECKING:  # the trace code is imported when the command runs: `kactor --help` stays quick
    from kactor.trace.show import Entry, Row

TABLE_LIMIT = 200  # a terminal table beyond this is unreadable; --limit raises it
_ROUTE_WIDTH = 30  # plain lines pad to fixed widths: they stream, so the widest value is not known in advance
_TYPE_WIDTH = 24


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _partition(text: str) -> tuple[str, int]:
    from kactor.trace.show import parse_partition

    try:
        return parse_partition(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "show", help="list a trace's messages, or follow the cause chain behind one",
        description="List the messages of a trace (all processes merged by time unless one is chosen), filtered by "
                    "type or partition; or, with --follow-cause SEQ, the chain of causes from an external input "
                    "down to message SEQ (--effects: everything SEQ caused, as a tree).")
    p.add_argument("trace_dir", metavar="TRACE_DIR", help="a trace folder (or one .jsonl file)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--process", metavar="NAME", help="one process's trace: NAME.jsonl (e.g. broker-0.1)")
    which.add_argument("--broker", type=int, metavar="N",
                       help="broker N's trace: broker-N.jsonl (a restart's: --process broker-N.1 ...)")
    p.add_argument("--follow-cause", type=int, metavar="SEQ",
                   help="the chain of causes from the root external input down to message SEQ (one process)")
    p.add_argument("--effects", action="store_true",
                   help="with --follow-cause: everything SEQ caused instead, indented as a tree")
    p.add_argument("--type", action="append", dest="types", metavar="T",
                   help="only messages of this class name, or carrying one (SendRequest, NetSend, NetRequest, "
                        "ShardRequest wrap requests); repeatable")
    p.add_argument("--partition", type=_partition, metavar="TOPIC-P",
                   help="only messages whose payload names this partition, e.g. orders-3")
    p.add_argument("--limit", type=_positive, metavar="N",
                   help=f"at most N rows (default: {TABLE_LIMIT}, or all with --json)")
    p.add_argument("--json", action="store_true", help="the matching records' JSON lines, unchanged")
    p.set_defaults(func=run)


# -- output -------------------------------------------------------------------------------------------------------


class _Sink(Protocol):
    def add(self, row: Row) -> None: ...

    def finish(self, more: int) -> None: ...


def _ms(row: Row, base: float) -> str:
    return f"{row.ts - base:.3f}"


def _route(row: Row) -> str:
    # the tree of --effects is drawn in front of the route: seq and time stay in aligned columns
    indent = "  " * (row.depth - 1) + "└─ " if row.depth else ""
    return f"{indent}{row.sender} → {row.receiver}"


class _Lines:
    """Plain lines, printed as they come (not a terminal: a pipe to grep or less, or a test)."""

    def __init__(self, base: float, process_width: int) -> None:
        self.base = base
        self.process_width = process_width

    def add(self, row: Row) -> None:
        process = f"{row.process:<{self.process_width}}  " if self.process_width else ""
        print(f"{process}{row.seq:>7}  {_ms(row, self.base):>11}  {_route(row):<{_ROUTE_WIDTH}}  "
              f"{row.type:<{_TYPE_WIDTH}}  {row.summary}".rstrip())

    def finish(self, more: int) -> None:
        if more:
            print(f"… {more:,} more (--limit N to show them)")


class _Table:
    """A rich table on a terminal; rows are kept until the end (at most --limit of them)."""

    def __init__(self, base: float, with_process: bool, title: str, time_label: str) -> None:
        self.base = base
        self.with_process = with_process
        self.title = title
        self.time_label = time_label
        self.rows: list[list[str]] = []

    def add(self, row: Row) -> None:
        cells = [row.process] if self.with_process else []
        self.rows.append([*cells, str(row.seq), _ms(row, self.base), _route(row), row.type, row.summary])

    def finish(self, more: int) -> None:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        table = Table(title=self.title, title_justify="left")
        headers = (["process"] if self.with_process else []) + ["seq", self.time_label, "sender → receiver", "type"]
        styles = (["magenta"] if self.with_process else []) + ["cyan", "", "", "bold"]
        used = 1
        for i, (header, style) in enumerate(zip(headers, styles, strict=True)):
            width = max(len(header), *(len(r[i]) for r in self.rows))
            used += width + 3  # a cell's padding and its border
            table.add_column(header, style=style, no_wrap=True, min_width=width,
                             justify="right" if header in ("seq", self.time_label) else "left")
        # the payload summary takes what the other columns leave: on a narrow terminal it is cut, they are not
        table.add_column("payload", overflow="ellipsis", no_wrap=True, max_width=max(console.width - used - 3, 10))
        for r in self.rows:
            table.add_row(*r)
        console.print(table)
        if more:
            console.print(f"… {more:,} more (--limit N to show them)")


# -- modes --------------------------------------------------------------------------------------------------------


class _Shown:
    """Counts against --limit: rows past it are only counted, for the "… N more" line."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.shown = 0
        self.more = 0

    def take(self) -> bool:
        if self.limit is None or self.shown < self.limit:
            self.shown += 1
            return True
        self.more += 1
        return False


def _select(trace_dir: str, process: str | None, broker: int | None) -> list[str]:
    from kactor.trace.reader import TraceError, trace_files
    from kactor.trace.show import process_name

    files = trace_files(trace_dir)
    if broker is not None:
        process = f"broker-{broker}"
    if process is None:
        return files
    chosen = [f for f in files if process_name(f) == process]
    if not chosen:
        what = f"broker {broker}" if broker is not None else f"process {process}"
        found = ", ".join(process_name(f) for f in files)
        raise TraceError(f"{trace_dir}: no trace for {what} (found: {found})")
    return chosen


def _sink(base: float, processes: list[str], title: str, time_label: str) -> _Sink:
    if sys.stdout.isatty():
        return _Table(base, len(processes) > 1, title, time_label)
    return _Lines(base, max(map(len, processes)) if len(processes) > 1 else 0)


def _show_list(args: argparse.Namespace, files: list[str]) -> _Shown:
    from kactor.trace.show import merged_entries, process_name, record_filter, row_of, start_ms

    keep = record_filter(args.types, args.partition)
    shown = _Shown(args.limit)
    entries: Iterator[Entry] = merged_entries(files)
    base = start_ms(files)
    sink: _Sink | None = None
    for e in entries:
        if not keep(e) or not shown.take():
            continue
        if args.json:
            print(e.raw)
            continue
        if sink is None:  # the time base falls back to the first row when no header says when the process started
            title = ", ".join(process_name(f) for f in files)
            sink = _sink(e.ts if base is None else base, [process_name(f) for f in files], title,
                         "ms since start")
        sink.add(row_of(e))
    if sink is not None:
        sink.finish(shown.more)
    return shown


def _show_chain(args: argparse.Namespace, path: str, seq: int) -> _Shown:
    from kactor.trace.show import cause_chain, process_name, record_filter, row_of

    keep = record_filter(args.types, args.partition)
    shown = _Shown(args.limit)
    chain = cause_chain(path, seq)
    sink = None if args.json else _sink(chain[0].ts, [process_name(path)],
                                        f"{process_name(path)}: the causes of seq {seq}", "ms after root")
    for e in chain:
        if keep(e) and shown.take():
            if sink is None:
                print(e.raw)
            else:
                sink.add(row_of(e))
    if sink is not None and shown.shown:
        sink.finish(shown.more)
    return shown


def _show_effects(args: argparse.Namespace, path: str, seq: int) -> _Shown:
    from kactor.trace.show import effects, process_name, record_filter, row_of, tree_order

    keep = record_filter(args.types, args.partition)
    shown = _Shown(args.limit)
    if args.json:  # file order: the lines stay a valid excerpt of the trace, and stream
        for e, _ in effects(path, seq):
            if keep(e) and shown.take():
                print(e.raw)
        return shown
    # a tree is drawn depth-first, so the subtree's rows (not their payloads) wait until the end of the file
    members: list[tuple[Row, int | None]] = []
    hidden: set[int] = set()
    for e, depth in effects(path, seq):
        members.append((row_of(e, depth), e.cause))
        if not keep(e):
            hidden.add(e.seq)  # still in the tree: its effects hang below it
    rows = [r for r in tree_order(members) if r.seq not in hidden and shown.take()]
    if rows:
        sink = _sink(members[0][0].ts, [process_name(path)], f"{process_name(path)}: the effects of seq {seq}",
                     "ms after seq")
        for r in rows:
            sink.add(r)
        sink.finish(shown.more)
    return shown


def run(args: argparse.Namespace) -> int:
    from kactor.trace.reader import TraceError
    from kactor.trace.show import process_name

    if args.effects and args.follow_cause is None:
        raise CliError("--effects needs --follow-cause SEQ", code=2)
    if args.limit is None and not args.json:
        args.limit = TABLE_LIMIT
    if not logging.getLogger().handlers:
        # the reader warns (a truncated last line) through logging: shown as `trace replay` shows it; a host that
        # configured logging already (a test run calling main) keeps its own handlers
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s", stream=sys.stderr)
    try:
        files = _select(args.trace_dir, args.process, args.broker)
        if args.follow_cause is None:
            shown = _show_list(args, files)
        elif len(files) > 1:
            found = ", ".join(process_name(f) for f in files)
            raise CliError(f"--follow-cause needs one process: --broker N or --process NAME (found: {found})",
                           code=2)
        elif args.effects:
            shown = _show_effects(args, files[0], args.follow_cause)
        else:
            shown = _show_chain(args, files[0], args.follow_cause)
        sys.stdout.flush()
    except TraceError as e:
        raise CliError(str(e)) from None
    except BrokenPipeError:
        # the reader (head, less) stopped reading: not an error; point stdout at /dev/null so the interpreter's
        # final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if not shown.shown:
        print("no matching messages", file=sys.stderr)
    elif args.json and shown.more:
        print(f"… {shown.more:,} more (--limit N to show them)", file=sys.stderr)  # stdout stays JSON lines
    return 0

