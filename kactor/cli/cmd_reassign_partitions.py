"""``kactor reassign-partitions``: the twin of Kafka 2.6's ``kafka-reassign-partitions.sh --zookeeper``
(kafka.admin.ReassignPartitionsCommand, legacy ZooKeeper path)."""

from __future__ import annotations

import argparse
import sys

from kactor.admin import reassign
from kactor.cli.support import (
    add_zookeeper_args,
    admin_client,
    admin_errors,
    printer,
    read_text_file,
    usage_error,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reassign-partitions", help="move partitions between brokers (as kafka-reassign-partitions.sh --zookeeper)",
        description="This tool helps to move topic partitions between replicas: --generate a proposal, --execute "
                    "it (writes /admin/reassign_partitions), --verify its progress.")
    add_zookeeper_args(p)
    act = p.add_mutually_exclusive_group(required=True)
    act.add_argument("--generate", action="store_true",
                     help="Generate a candidate partition reassignment configuration (writes nothing).")
    act.add_argument("--execute", action="store_true",
                     help="Kick off the reassignment as specified by the --reassignment-json-file option.")
    act.add_argument("--verify", action="store_true",
                     help="Verify if the reassignment completed as specified by --reassignment-json-file.")
    p.add_argument("--topics-to-move-json-file", metavar="FILE",
                   help='Generate a reassignment for these topics: {"topics":[{"topic":"foo"}],"version":1}')
    p.add_argument("--broker-list", metavar="0,1,2", help="The brokers to which the partitions are to be moved "
                                                          "(with --generate).")
    p.add_argument("--reassignment-json-file", metavar="FILE",
                   help='The reassignment: {"version":1,"partitions":[{"topic":"foo","partition":0,'
                        '"replicas":[1,2],"log_dirs":["any","any"]}]}')
    p.add_argument("--disable-rack-aware", action="store_true", help="Disable rack aware replica assignment")
    p.add_argument("--wait", action="store_true", help="with --verify: poll until every partition is done")
    p.add_argument("--timeout", type=float, default=reassign.DEFAULT_WAIT_TIMEOUT_S, metavar="S",
                   help=f"with --verify --wait: give up after S seconds (default {reassign.DEFAULT_WAIT_TIMEOUT_S:g})")
    p.add_argument("--poll-interval", type=float, default=0.5, metavar="S", help=argparse.SUPPRESS)
    p.add_argument("--start-index", type=int, default=-1, help=argparse.SUPPRESS)
    p.set_defaults(func=run, _parser=p)


def run(args: argparse.Namespace) -> int:
    action = "generate" if args.generate else "execute" if args.execute else "verify"
    allowed = {
        "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware"},
        "execute": {"reassignment_json_file"},
        "verify": {"reassignment_json_file", "wait"},
    }[action]
    for dest in ("topics_to_move_json_file", "broker_list", "reassignment_json_file", "disable_rack_aware", "wait"):
        if getattr(args, dest) not in (None, False) and dest not in allowed:
            usage_error(args, f'option --{dest.replace("_", "-")} can\'t be used with --{action}')
    required = {"generate": ("topics_to_move_json_file", "broker_list")}.get(action, ("reassignment_json_file",))
    for dest in required:
        if getattr(args, dest) is None:
            usage_error(args, f"--{action} requires --{dest.replace('_', '-')}")
    if args.timeout <= 0:
        usage_error(args, "--timeout must be positive")
    out = printer()
    if action == "generate":
        text = read_text_file(args.topics_to_move_json_file, "topics-to-move JSON file")
        with admin_errors():  # file format problems are reported before connecting
            reassign.parse_broker_list(args.broker_list)
            reassign.parse_topics_data(text)
        with admin_client(args) as admin:
            reassign.generate_assignment(admin, out, text, args.broker_list, not args.disable_rack_aware,
                                         args.start_index)
        return 0
    text = read_text_file(args.reassignment_json_file, "reassignment JSON file")
    if action == "execute":
        with admin_errors():
            reassign.parse_execute_assignment(text)
        with admin_client(args) as admin:
            reassign.execute_assignment(admin, out, text)
        return 0
    with admin_errors():
        reassign.parse_partition_reassignment_data(text)
    with admin_client(args) as admin:
        progress = (lambda line: print(line, file=sys.stderr, flush=True)) if args.wait else None
        reassign.verify_assignment(admin, out, text, wait=args.wait, timeout_s=args.timeout,
                                   poll_s=args.poll_interval, progress=progress)
    return 0
