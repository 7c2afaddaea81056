"""``kactor trace replay TRACE_DIR... [--broker N] [--until SEQ] [--check] [--dump-state [--json]] [--jobs N]
[--split auto|actors|brokers]``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from kactor.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a broker process's trace (optionally checking every message)",
                       description="Rebuild one broker process's actors, feed the trace's external inputs in order "
                                   "and, with --check, compare every message the actors emit with the recorded one.")
    p.add_argument("trace_dir", nargs="+",
                   help="a trace folder (or one .jsonl file); several are replayed by one process and its --jobs")
    p.add_argument("--broker", type=int, help="the broker whose trace to replay (default: every trace file)")
    p.add_argument("--until", type=int, metavar="SEQ", help="stop after the message with this sequence number")
    p.add_argument("--check", action="store_true", help="compare every emitted message with the recorded one")
    p.add_argument("--dump-state", action="store_true", help="print the controller context at the end")
    p.add_argument("--json", action="store_true", help="with --dump-state: JSON instead of tables")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="replay in N processes (0: one per CPU; not with --dump-state)")
    p.add_argument("--split", choices=("auto", "actors", "brokers"), default="auto",
                   help="with --jobs: what a process replays at a time — a broker's chain of trace files, or a group "
                        "of its actors (a shard, the replica manager, the rest) fed what the others sent it; auto "
                        "cuts a broker by actor when its whole replay would leave processes idle (default)")
    p.add_argument("--verbose", action="store_true", help="show the log lines the replayed actors write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kactor.hashseed import ensure_fixed_hash_seed
    from kactor.trace.reader import TraceError, broker_chains, trace_files, trace_files_for_broker
    from kactor.trace.replay import replay_chain, replay_many

    ensure_fixed_hash_seed()  # the recording broker ran with it; set iteration order must match
    if not args.verbose:
        # the replayed actors log again what the broker logged live (errors included): noise here; the trace
        # reader's own warnings (a truncated last line) still show
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        handler.addFilter(lambda record: record.name.startswith("kactor.trace"))
        root = logging.getLogger()
        root.handlers[:] = [handler]
        root.setLevel(logging.WARNING)
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    try:
        # one process for many folders: a replay's start (imports, forking workers) costs more than a small trace
        files = [f for d in args.trace_dir
                 for f in (trace_files_for_broker(d, args.broker) if args.broker is not None else trace_files(d))]
        rc = 0
        if args.dump_state or jobs <= 1:
            # a broker's incarnations in order, on one scratch folder: a restarted broker reads its log dirs
            results = (r for chain in broker_chains(files)
                       for r in replay_chain(chain, until=args.until, check=args.check,
                                             keep_runtime=args.dump_state))
        elif args.split == "brokers":
            results = iter(replay_many(files, until=args.until, check=args.check, jobs=jobs))
        else:
            # a broker's chain cut by actor where that evens out the processes' work (kactor/trace/split.py)
            from kactor.trace.split import replay_split

            results = iter(replay_split(files, until=args.until, check=args.check, jobs=jobs, split=args.split))
        for result in results:
            path = result.path
            if args.check:
                if result.identical:
                    speed = result.compared / result.wall_s if result.wall_s > 0 else float("inf")
                    print(f"{path}: identical: {result.compared} messages "
                          f"({result.wall_s:.2f}s, {speed:,.0f} msg/s)")
                else:
                    d = result.divergence
                    assert d is not None
                    print(f"{path}: diverged at seq {d.seq} ({d.field})")
                    print(f"  expected: {json.dumps(d.expected)}")
                    print(f"  actual:   {json.dumps(d.actual)}")
                    rc = 1
            else:
                print(f"{path}: replayed {result.delivered} inputs in {result.wall_s:.2f}s")
            if args.dump_state and result.runtime is not None:
                from kactor.trace.state_dump import dump_state, render_state

                state = dump_state(result.runtime)
                if args.json:
                    json.dump(state, sys.stdout, indent=2, sort_keys=True)
                    print()
                else:
                    render_state(state)
                result.runtime.shutdown()
        return rc
    except TraceError as e:
        raise CliError(str(e)) from None
