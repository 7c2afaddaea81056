"""``kactor preferred-replica-election``: the twin of Kafka 2.6's ``kafka-preferred-replica-election.sh
--zookeeper`` (kafka.admin.PreferredReplicaLeaderElectionCommand, ZkCommand path)."""

from __future__ import annotations

import argparse

from kactor.admin import preferred
from kactor.cli.support import add_zookeeper_args, admin_client, admin_errors, printer, read_text_file


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "preferred-replica-election",
        help="move leadership back to preferred replicas (as kafka-preferred-replica-election.sh --zookeeper)",
        description="Writes /admin/preferred_replica_election for the partitions in --path-to-json-file, or for "
                    "every partition of the cluster; the controller then elects each partition's first replica.")
    add_zookeeper_args(p)
    p.add_argument("--path-to-json-file", metavar="FILE",
                   help='The partitions: {"partitions":[{"topic":"foo","partition":1}]}. '
                        "Defaults to all existing partitions.")
    p.set_defaults(func=run, _parser=p)


def run(args: argparse.Namespace) -> int:
    partitions = None
    if args.path_to_json_file is not None:
        text = read_text_file(args.path_to_json_file, "preferred replica election JSON file")
        with admin_errors():
            partitions = preferred.parse_preferred_replica_election_data(text)
    with admin_client(args) as admin:
        preferred.elect_preferred_leaders(admin, printer(), partitions)
    return 0
