"""``kactor acls``: Kafka 2.6.3's ``kafka-acls.sh`` (kafka.admin.AclCommand) with ``--authorizer-properties
zookeeper.connect=HOST:PORT[/chroot]``: add, remove and list ACLs in ZooKeeper as AclAuthorizer stores them
(core/security/acl_store.py), with AclCommand's options, its ``--producer`` / ``--consumer`` shortcuts and its output;
with ``--bootstrap-server`` the same through the brokers' ACL APIs (kactor/cli/acls_kafka.py).

Where Kafka's order comes from a JVM hash set (the ACLs one command adds, the resources it lists), the order here is the
command line's (principals, then operations, then hosts; allow before deny) and the authorizer cache's (resource type,
pattern type, name descending), and a resource's ACLs keep their znode's order.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

from core.controller.errors import KeeperError
from core.security.acl import (
    ANY_BINDING,
    ANY_ENTRY,
    CLUSTER_NAME,
    WILDCARD_HOST,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    KafkaPrincipal,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    parse_kafka_principal,
    supported_operations,
)
from core.security.acl_store import AclUpdateError, ZkAclAuthorizer
from kactor.admin.zk_session import zk_session
from kactor.cli import CliError, kafka_options
from kactor.cli.support import admin_errors, usage_error
from zk_bridge.admin.admin_zk import DEFAULT_CONNECT_TIMEOUT_S
from zk_bridge.blocking import BlockingZk

ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
AUTHORIZERS = (ACL_AUTHORIZER, "kafka.security.auth.SimpleAclAuthorizer")  # 2.6 still accepts the deprecated name
CLUSTER_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
NEWLINE = "\n"
Out = Callable[[str], None]
FilterAcls = dict[ResourcePatternFilter, list[AccessControlEntry]]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "acls",
        description="This tool helps to manage acls on kafka: through the brokers' ACL APIs (--bootstrap-server) "
                    "or in ZooKeeper as Kafka 2.6's AclAuthorizer stores them (--authorizer-properties "
                    "zookeeper.connect=HOST:PORT[/chroot]).")
    p.add_argument("--bootstrap-server", metavar="HOST:PORT",
                   help="A list of host/port pairs to use for establishing the connection to the Kafka cluster. "
                        "This list should be in the form host1:port1,host2:port2,... This config is required for acl "
                        "management using admin client API.")
    p.add_argument("--command-config", metavar="FILE",
                   help="A property file containing configs to be passed to Admin Client (security.protocol, "
                        "sasl.mechanism, sasl.jaas.config, ssl.*: mapped to librdkafka's settings).")
    p.add_argument("--authorizer", metavar="CLASS", help=f"Fully qualified class name of the authorizer, defaults "
                                                         f"to {ACL_AUTHORIZER}.")
    p.add_argument("--authorizer-properties", action="append", metavar="K=V",
                   help="REQUIRED: properties required to configure an instance of Authorizer. These are key=val "
                        "pairs. For the default authorizer the example values are: zookeeper.connect=localhost:2181")
    p.add_argument("--topic", action="append", metavar="TOPIC",
                   help="topic to which ACLs should be added or removed. A value of * indicates ACL should apply to "
                        "all topics.")
    p.add_argument("--cluster", action="store_true", help="Add/Remove cluster ACLs.")
    p.add_argument("--group", action="append", metavar="GROUP",
                   help="Consumer Group to which the ACLs should be added or removed. A value of * indicates the "
                        "ACLs should apply to all groups.")
    p.add_argument("--transactional-id", action="append", metavar="ID",
                   help="The transactionalId to which ACLs should be added or removed. A value of * indicates the "
                        "ACLs should apply to all transactionalIds.")
    p.add_argument("--idempotent", action="store_true",
                   help="Enable idempotence for the producer. This should be used in combination with the --producer "
                        "option.")
    p.add_argument("--delegation-token", action="append", metavar="TOKEN",
                   help="Delegation token to which ACLs should be added or removed. A value of * indicates ACL should "
                        "apply to all tokens.")
    p.add_argument("--resource-pattern-type", default="LITERAL", metavar="ANY|MATCH|LITERAL|PREFIXED",
                   help="The type of the resource pattern or pattern filter (default literal). When adding acls, "
                        "'literal' or 'prefixed'; when listing or removing also 'any' or 'match'.")
    p.add_argument("--add", action="store_true", help="Indicates you are trying to add ACLs.")
    p.add_argument("--remove", action="store_true", help="Indicates you are trying to remove ACLs.")
    p.add_argument("--list", action="store_true", help="List ACLs for the specified resource, use --topic <topic> "
                                                        "or --group <group> or --cluster to specify a resource.")
    p.add_argument("--operation", action="append", metavar="OP",
                   help="Operation that is being allowed or denied (default All). Valid operation names are: "
                        + ", ".join(o.pascal_name for o in AclOperation if o.code >= AclOperation.ALL.code))
    p.add_argument("--allow-principal", action="append", metavar="TYPE:NAME",
                   help="principal is in principalType:name format. For example, User:* is the wild card indicating "
                        "all users.")
    p.add_argument("--deny-principal", action="append", metavar="TYPE:NAME",
                   help="principal is in principalType:name format. DENY RULES TAKE PRECEDENCE OVER ALLOW RULES.")
    p.add_argument("--principal", action="append", metavar="TYPE:NAME",
                   help="List ACLs for the specified principal (with --list; repeatable).")
    p.add_argument("--allow-host", action="append", metavar="HOST",
                   help="Host from which principals listed in --allow-principal will have access (default *).")
    p.add_argument("--deny-host", action="append", metavar="HOST",
                   help="Host from which principals listed in --deny-principal will be denied access (default *).")
    p.add_argument("--producer", action="store_true",
                   help="Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows "
                        "WRITE,DESCRIBE and CREATE on topic.")
    p.add_argument("--consumer", action="store_true",
                   help="Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows "
                        "READ,DESCRIBE on topic and READ on group.")
    p.add_argument("--force", action="store_true", help="Assume Yes to all queries and do not prompt.")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for ZooKeeper (default {DEFAULT_CONNECT_TIMEOUT_S:g})")
    kafka_options.add_refusals(p, "acls")
    p.set_defaults(func=run, _parser=p)


# -- AclCommandOptions.checkArgs ---------------------------------------------------------------------------------------
def _given(args: argparse.Namespace, dest: str) -> bool:
    value = getattr(args, dest)
    return value not in (None, False, [])


def check_args(args: argparse.Namespace) -> None:
    """AclCommandOptions.checkArgs: each refusal a usage error (exit 2), with Kafka's message."""
    if args.bootstrap_server is not None and args.authorizer is not None:
        usage_error(args, "Only one of --bootstrap-server or --authorizer must be specified")
    if args.bootstrap_server is None and not args.authorizer_properties:
        usage_error(args, 'Missing required argument "[authorizer-properties]"')
    if args.command_config is not None and args.bootstrap_server is None:
        usage_error(args, "The --command-config option can only be used with --bootstrap-server option")
    if args.authorizer_properties and args.bootstrap_server is not None:
        usage_error(args, "The --authorizer-properties option can only be used with --authorizer option")
    if sum((args.add, args.remove, args.list)) != 1:
        usage_error(args, "Command must include exactly one action: --list, --add, --remove. ")
    for used, invalid in (("list", ("producer", "consumer", "allow_host", "allow_principal", "deny_host",
                                    "deny_principal")),
                          ("producer", ("operation", "deny_principal", "deny_host")),
                          ("consumer", ("operation", "deny_principal", "deny_host"))):
        if _given(args, used):
            for dest in invalid:
                if _given(args, dest):
                    usage_error(args, f'Option "[{used}]" can\'t be used with option "[{dest.replace("_", "-")}]"')
    if args.principal and not args.list:
        usage_error(args, "The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        usage_error(args, "With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        usage_error(args, "The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group or
                          (not args.producer and (args.cluster or args.transactional_id))):
        usage_error(args, "With --consumer you must specify a --topic and a --group and no --cluster or "
                          "--transactional-id option should be specified.")


def pattern_type_of(args: argparse.Namespace) -> PatternType:
    """PatternTypeConverter: any case of ANY, MATCH, LITERAL, PREFIXED."""
    pattern_type = PatternType.__members__.get(args.resource_pattern_type.strip().upper())
    if pattern_type is None or pattern_type is PatternType.UNKNOWN:
        usage_error(args, f"Unknown resource-pattern-type: {args.resource_pattern_type}")
    assert pattern_type is not None
    return pattern_type


# -- what AclCommand builds from the options ---------------------------------------------------------------------------
def resource_filters(args: argparse.Namespace, die_if_none: bool = True) -> list[ResourcePatternFilter]:
    """AclCommand.getResourceFilter: topics, the cluster (literal only), groups, transactional ids, tokens."""
    pattern_type = pattern_type_of(args)
    filters: list[ResourcePatternFilter] = []
    filters += [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pattern_type) for t in args.topic or ()]
    if pattern_type is PatternType.LITERAL and (args.cluster or args.idempotent):
        filters.append(CLUSTER_FILTER)
    filters += [ResourcePatternFilter(ResourceType.GROUP, g.strip(), pattern_type) for g in args.group or ()]
    filters += [ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pattern_type)
                for t in args.transactional_id or ()]
    filters += [ResourcePatternFilter(ResourceType.DELEGATION_TOKEN, t.strip(), pattern_type)
                for t in args.delegation_token or ()]
    filters = list(dict.fromkeys(filters))
    if not filters and die_if_none:
        usage_error(args, "You must provide at least one resource: --topic <topic> or --cluster or --group <group> "
                          "or --delegation-token <Delegation Token ID>")
    return filters


def _principals(values: Iterable[str] | None) -> list[KafkaPrincipal]:
    try:
        return list(dict.fromkeys(parse_kafka_principal(v.strip()) for v in values or ()))
    except ValueError as e:
        raise CliError(f"Error while executing ACL command: {e}") from None


def _hosts(hosts: Sequence[str] | None, principals: Sequence[str] | None) -> list[str]:
    """AclCommand.getHosts: the hosts given, else ``*`` when principals are."""
    if hosts:
        return list(dict.fromkeys(h.strip() for h in hosts))
    return [WILDCARD_HOST] if principals else []


def acl_entries(args: argparse.Namespace, operations: Sequence[AclOperation]) -> list[AccessControlEntry]:
    """AclCommand.getAcl: every allowed principal × operation × allowed host, then the same for the denied."""
    entries: list[AccessControlEntry] = []
    for principals, hosts, permission in (
            (args.allow_principal, _hosts(args.allow_host, args.allow_principal), AclPermissionType.ALLOW),
            (args.deny_principal, _hosts(args.deny_host, args.deny_principal), AclPermissionType.DENY)):
        for principal in _principals(principals):
            if not hosts:
                continue
            entries += [AccessControlEntry(str(principal), host, op, permission) for op in operations
                        for host in hosts]
    return list(dict.fromkeys(entries))


def _cli_operations(args: argparse.Namespace) -> list[AclOperation]:
    return list(dict.fromkeys(AclOperation.from_name(o.strip()) for o in args.operation or ["All"]))


def filter_to_acls(args: argparse.Namespace) -> FilterAcls:
    """AclCommand.getResourceFilterToAcls: the command line's ACLs on each resource, or the --producer / --consumer
    expansion (producer: Write, Describe, Create on topics; Write, Describe on transactional ids; IdempotentWrite
    on the cluster with --idempotent. consumer: Read, Describe on topics, Read on groups); then validateOperation."""
    out: FilterAcls = {}
    if not args.producer and not args.consumer:
        entries = acl_entries(args, _cli_operations(args))
        out = {f: list(entries) for f in resource_filters(args)}
    op = AclOperation
    if args.producer:
        filters = resource_filters(args)
        for f in filters:
            if f.resource_type is ResourceType.TOPIC:
                out[f] = acl_entries(args, (op.WRITE, op.DESCRIBE, op.CREATE))
        for f in filters:
            if f.resource_type is ResourceType.TRANSACTIONAL_ID:
                out[f] = acl_entries(args, (op.WRITE, op.DESCRIBE))
        if args.idempotent:
            out[CLUSTER_FILTER] = acl_entries(args, (op.IDEMPOTENT_WRITE,))
    if args.consumer:
        filters = resource_filters(args)
        consumer = {f: acl_entries(args, (op.READ, op.DESCRIBE)) for f in filters
                    if f.resource_type is ResourceType.TOPIC}
        consumer.update({f: acl_entries(args, (op.READ,)) for f in filters if f.resource_type is ResourceType.GROUP})
        for f, entries in consumer.items():
            out[f] = list(dict.fromkeys([*entries, *out.get(f, [])]))
    for f, entries in out.items():
        valid = supported_operations(f.resource_type) | {op.ALL}
        if any(e.operation not in valid for e in entries):
            names = ",".join(str(o) for o in sorted(valid, key=lambda o: o.code))
            usage_error(args, f"ResourceType {f.resource_type} only supports operations {names}")
    return out


def resource_to_acls(args: argparse.Namespace) -> dict[ResourcePattern, list[AccessControlEntry]]:
    """AclCommand.getResourceToAcls: what --add writes (a specific pattern type, at least one principal)."""
    pattern_type = pattern_type_of(args)
    if not pattern_type.is_specific:
        usage_error(args, f"A '--resource-pattern-type' value of '{pattern_type}' is not valid when adding acls.")
    out = {ResourcePattern(f.resource_type, f.name or "", f.pattern_type): acls
           for f, acls in filter_to_acls(args).items()}
    if any(not acls for acls in out.values()):
        usage_error(args, "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return out


# -- output -----------------------------------------------------------------------------------------------------------
def _block(head: str, entries: Iterable[object]) -> str:
    """AclCommand's ``s"$head: $Newline ${acls.map("\\t" + _).mkString(Newline)} $Newline"``, printed by println."""
    return f"{head}: {NEWLINE} {NEWLINE.join(chr(9) + str(e) for e in entries)} {NEWLINE}"


def adding_text(pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> str:
    return _block(f"Adding ACLs for resource `{pattern}`", entries)


def current_text(pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> str:
    return _block(f"Current ACLs for resource `{pattern}`", entries)


def group_by_resource(bindings: Iterable[AclBinding]) -> dict[ResourcePattern, list[AccessControlEntry]]:
    out: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for b in bindings:
        entries = out.setdefault(b.pattern, [])
        if b.entry not in entries:
            entries.append(b.entry)
    return out


# -- AuthorizerService ------------------------------------------------------------------------------------------------
def zookeeper_connect(args: argparse.Namespace) -> str:
    """The authorizer's ZooKeeper: ``authorizer.zookeeper.url`` if given, else ``zookeeper.connect`` (both parsed as
    CommandLineUtils.parseKeyValueArgs: key=value, a value may hold '=')."""
    props: dict[str, str] = {}
    for item in args.authorizer_properties or ():
        key, sep, value = item.partition("=")
        if not sep:
            usage_error(args, f"Invalid command line properties: {item}")
        props[key.strip()] = value.strip()
    connect = props.get("authorizer.zookeeper.url") or props.get("zookeeper.connect")
    if not connect:
        raise CliError('Error while executing ACL command: Missing required configuration "zookeeper.connect" '
                       "which has no default value.")
    return connect


def list_acls(authorizer: ZkAclAuthorizer, args: argparse.Namespace, out: Out) -> None:
    """AuthorizerService.listAcls."""
    list_acls_with(authorizer.acls, args, out)


def list_acls_with(acls: Callable[[AclBindingFilter], list[AclBinding]], args: argparse.Namespace, out: Out) -> None:
    """listAcls over ``acls(filter)``: the authorizer's (AuthorizerService) or DescribeAcls (AdminClientService)."""
    filters = resource_filters(args, die_if_none=False)
    bindings = [b for f in filters for b in acls(AclBindingFilter(f, ANY_ENTRY))] if filters else \
        acls(ANY_BINDING)
    resource_acls = group_by_resource(bindings)
    principals = _principals(args.principal)
    if not principals:
        for pattern, entries in resource_acls.items():
            out(current_text(pattern, entries))
        return
    for principal in principals:
        out(f"ACLs for principal `{principal}`")
        for pattern, entries in resource_acls.items():
            mine = [e for e in entries if e.principal == str(principal)]
            if mine:
                out(current_text(pattern, mine))


def add_acls(authorizer: ZkAclAuthorizer, blocking: BlockingZk, args: argparse.Namespace,
             to_add: dict[ResourcePattern, list[AccessControlEntry]], out: Out) -> None:
    """AuthorizerService.addAcls: per resource, the announcement, then createAcls and its errors; then the list."""
    for pattern, entries in to_add.items():
        out(adding_text(pattern, entries))
        results = blocking.run(authorizer.create_acls([AclBinding(pattern, e) for e in entries]))
        for error in results:  # one report per binding that failed, as Kafka prints each result's exception
            if error is not None:
                out("Error while adding ACLs: Failed to create ACL")
                out(f"Caused by: {error}")
    list_acls(authorizer, args, out)


def _confirm(args: argparse.Namespace, message: str, out: Out) -> bool:
    """AclCommand.confirmAction: --force, or a ``y`` read from the standard input (end of input: no)."""
    if args.force:
        return True
    out(message)
    line = sys.stdin.readline()
    return line.strip().lower() == "y"


def _removals(args: argparse.Namespace, out: Out) -> Iterator[list[AclBindingFilter]]:
    """removeAcls' loop: per resource filter, the binding filters of all its ACLs or of those given, once confirmed."""
    for pattern_filter, entries in filter_to_acls(args).items():
        if not entries:
            question = f"Are you sure you want to delete all ACLs for resource filter `{pattern_filter}`? (y/n)"
            filters = [AclBindingFilter(pattern_filter, ANY_ENTRY)]
        else:
            question = (f"Are you sure you want to remove ACLs: {NEWLINE} "
                        f"{NEWLINE.join(chr(9) + str(e) for e in entries)} {NEWLINE} from resource filter "
                        f"`{pattern_filter}`? (y/n)")
            filters = [AclBindingFilter(pattern_filter, e.to_filter()) for e in entries]
        if _confirm(args, question, out):
            yield filters


def remove_acls(authorizer: ZkAclAuthorizer, blocking: BlockingZk, args: argparse.Namespace, out: Out) -> None:
    """AuthorizerService.removeAcls: per resource filter, all its ACLs or those given, after confirmation."""
    for filters in _removals(args, out):
        for removed in blocking.run(authorizer.delete_acls(filters)):
            for deleted in removed:
                if deleted.error is not None:
                    out(f"Error while removing ACLs: {deleted.error}")
    list_acls(authorizer, args, out)


def run_admin_client(args: argparse.Namespace, to_add: dict[ResourcePattern, list[AccessControlEntry]],
                     out: Out) -> None:
    """AclCommand.AdminClientService: addAcls (per resource, the announcement, then ``createAcls(...).all().get()``),
    removeAcls (``deleteAcls``), then listAcls (one DescribeAcls per resource filter, or one for every ACL)."""
    from kactor.cli import acls_kafka

    def warn(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    props = acls_kafka.load_command_config(args.command_config, warn)
    acls_kafka.refuse_delegation_tokens([*(p.resource_type for p in to_add),
                                         *(f.resource_type for f in resource_filters(args, die_if_none=False))])
    admin = acls_kafka.AdminAcls(args.bootstrap_server, dict(props.librdkafka), props=props)
    acls_kafka.check_login(args.bootstrap_server, props)
    if args.add:
        for pattern, entries in to_add.items():
            out(adding_text(pattern, entries))
            admin.create([AclBinding(pattern, e) for e in entries])
    elif args.remove:
        for filters in _removals(args, out):
            admin.delete(filters)
    list_acls_with(admin.describe, args, out)


def run(args: argparse.Namespace) -> int:
    check_args(args)
    if args.authorizer is not None and args.authorizer not in AUTHORIZERS:
        raise CliError(f"Error while executing ACL command: kactor has only {ACL_AUTHORIZER}, not {args.authorizer}")
    pattern_type_of(args)
    to_add = resource_to_acls(args) if args.add else {}
    if args.remove:
        filter_to_acls(args)  # its usage errors before connecting, as Kafka's parse of the options

    def out(text: str) -> None:
        print(text, flush=True)

    if args.bootstrap_server is not None:
        run_admin_client(args, to_add, out)
        return 0
    connect = zookeeper_connect(args)

    # kazoo warns of a missing chroot, which the next line creates
    warnings.filterwarnings("ignore", message="No chroot path exists")

    try:
        with admin_errors(), zk_session(connect, args.connect_timeout) as zk:
            zk.ensure_path("/")  # AclAuthorizer's KafkaZkClient creates its chroot if necessary
            with BlockingZk(zk) as blocking:
                authorizer = ZkAclAuthorizer()
                blocking.run(authorizer.load())
                if args.add:
                    add_acls(authorizer, blocking, args, to_add, out)
                elif args.remove:
                    remove_acls(authorizer, blocking, args, out)
                else:
                    list_acls(authorizer, args, out)
    except (KeeperError, AclUpdateError, TimeoutError) as e:
        raise CliError(f"Error while executing ACL command: {e}") from None
    return 0
