"""AdminManager: the admin APIs of a broker (Kafka 2.6's ``kafka.server.AdminManager`` with the admin parts of
``KafkaApis``), answering Kafka requests through ZooKeeper as `AdminZkClient` does.

The transport calls `AdminManager.handle(api_key, version, body, ctx)` on a thread of its own for every request the
registry routes to "edge:admin" (core/api/admin.py); ``body`` is the decoded request and the answer is the response
body (every field of the newest version: core/api/admin.py fits it to the request's version). Nothing here blocks an
actor: it waits on its own kazoo session, as Kafka's request handler threads wait on KafkaZkClient.

It lives in the shell layer, beside the AdminZkClient it runs (edges may not import kactor): the broker process, the
composition root, builds it and plugs it into the transport. Where Kafka consults the broker's metadata cache (does
the topic exist, are its leaders elected) this reads ZooKeeper, which the cache follows.

The per-API answers mirror 2.6: NOT_CONTROLLER from a broker that is not the controller for CreateTopics, DeleteTopics
and CreatePartitions (``controller.isActive``: here /controller names this broker); a successful CreateTopics /
CreatePartitions waits up to ``timeout_ms`` for the new partitions' leaders (DelayedCreatePartitions) and a
DeleteTopics for the topics to be gone (DelayedDeleteTopics), else REQUEST_TIMED_OUT; ``timeout_ms <= 0`` answers
REQUEST_TIMED_OUT at once for what was started, as 2.6 does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

from core.api.admin import (
    AdminRequest,
    authorize_config_resources,
    authorize_create_partitions,
    authorize_create_topics,
    authorize_delete_topics,
)
from core.api.registry import AdminService, ApiSpec, spec_for_key, units
from core.security.acl import parse_super_users
from core.security.acl_store import load_acls
from core.security.authorizer import (
    ALLOW_ALL,
    ANONYMOUS,
    Authorizer,
    RequestAuthorizer,
    acl_authorizer_configs,
    authorizer_enabled,
)
from messages.common import NO_LEADER, Errors, TopicPartition
from protocol.api_versions import ApiKeys
from zk_bridge.admin import (
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
    admin_configs,
    admin_quotas,
    admin_reassign,
    topic_name,
)
from zk_bridge.admin.admin_acls import handle_acls
from zk_bridge.admin.admin_zk import AdminZkClient
from zk_bridge.admin.api_errors import Body, InvalidRequestException, ReassignmentInProgressException, api_error
from zk_bridge.admin.assignment import BrokerMetadata, assign_replicas_to_brokers
from zk_bridge.admin.config_entries import BrokerConfigView, KafkaConfigView, topic_config_entries
from zk_bridge.blocking import BlockingZk

log = logging.getLogger("kactor.admin_manager")

NO_NUM_PARTITIONS = -1  # CreateTopicsRequest.NO_NUM_PARTITIONS
NO_REPLICATION_FACTOR = -1  # CreateTopicsRequest.NO_REPLICATION_FACTOR
POLL_S = 0.05


class AdminManager:
    """kafka.server.AdminManager for one broker. ``zk`` is a started KazooClient of its own; ``controller_events``
    hands an event to this broker's controller (the broker process injects it into the controller actor)."""

    def __init__(self, zk: KazooClient, config: KafkaConfigView,
                 controller_events: Callable[[Any], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.admin = AdminZkClient(zk)
        self.zk_client = zk
        self.config = config
        self.broker_id = config.broker_id
        self.controller_events = controller_events
        self.clock = clock
        self.sleep = sleep

    @property
    def api_keys(self) -> frozenset[int]:
        """The api keys whose unit's service is this admin server."""
        return frozenset(spec.api_key for spec in units() if isinstance(spec.service, AdminService))

    def handle_request(self, ctx: Any, request: AdminRequest) -> Body:
        """The transport's edge-handler call (``transport.add_edge_handler("admin", ...)``)."""
        return self.handle(request.api_key, request.version, request.body, ctx)

    def handle(self, api_key: int, version: int, body: Body, ctx: Any = None) -> Body:
        """KafkaApis.handle for the admin APIs: the response body (newest version's fields) to ``body``, by the
        AdminManager method the API's unit names, after the unit's authorization (`AdminService`)."""
        spec = spec_for_key(api_key)
        service = None if spec is None else spec.service
        if spec is None or not isinstance(service, AdminService):
            raise ValueError(f"api key {api_key} is not an admin API")
        serve: Callable[[int, Body, Any], Body] = getattr(self, service.method)
        if service.cluster_operation is not None or service.config_operation is not None:
            auth = self.request_authorizer(ctx)
            if auth.enabled:
                return self._authorized(spec, service, version, body, ctx, auth, serve)
        return serve(version, body, ctx)

    def _authorized(self, spec: ApiSpec, service: AdminService, version: int, body: Body, ctx: Any,
                    auth: RequestAuthorizer, serve: Callable[[int, Body, Any], Body]) -> Body:
        """KafkaApis' authorization of the admin APIs authorized by their unit: a Cluster operation refused answers
        the request's error response (CLUSTER_AUTHORIZATION_FAILED); config resources are refused one by one, the
        others served."""
        if service.cluster_operation is not None:
            if auth.allows_cluster(service.cluster_operation):
                return serve(version, body, ctx)
            return spec.error_response(version, body, int(Errors.CLUSTER_AUTHORIZATION_FAILED))
        assert service.config_operation is not None
        served, refused = authorize_config_resources(body.get("resources") or [], service.config_operation, auth,
                                                     spec.api_key == ApiKeys.DESCRIBE_CONFIGS)
        key = service.config_results
        response = serve(version, {**body, "resources": served}, ctx) if served else {"throttle_time_ms": 0}
        return {**response, key: [*(response.get(key) or []), *refused]}

    # -- the methods the admin units name (version, body, the request's context) --------------------------------------
    def serve_create_topics(self, version: int, body: Body, ctx: Any) -> Body:
        return self.create_topics(version, body, self.request_authorizer(ctx))

    def serve_delete_topics(self, version: int, body: Body, ctx: Any) -> Body:
        return self.delete_topics(version, body, self.request_authorizer(ctx))

    def serve_create_partitions(self, version: int, body: Body, ctx: Any) -> Body:
        """KafkaApis.handleCreatePartitionsRequest's authorization: ALTER on each topic (the others answer
        TOPIC_AUTHORIZATION_FAILED), after NOT_CONTROLLER, as KafkaApis."""
        auth = self.request_authorizer(ctx)
        topics = body.get("topics") or []
        if not auth.enabled or not self.is_controller():
            return self.create_partitions(version, body)
        names = [t["name"] for t in topics]
        alterable = authorize_create_partitions(names, auth)
        served_topics = [t for t in topics if t["name"] in alterable or names.count(t["name"]) > 1]
        refused_results = [{"name": t["name"], "error_code": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                            "error_message": None} for t in topics if t not in served_topics]
        response = self.create_partitions(version, {**body, "topics": served_topics}) if served_topics else \
            {"throttle_time_ms": 0}
        return {**response, "results": [*(response.get("results") or []), *refused_results]}

    def serve_describe_configs(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_configs.describe_configs(self, version, body)

    def serve_alter_configs(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_configs.alter_configs(self, version, body)

    def serve_incremental_alter_configs(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_configs.incremental_alter_configs(self, version, body)

    def serve_elect_leaders(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_reassign.elect_leaders(self, version, body)

    def serve_alter_partition_reassignments(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_reassign.alter_partition_reassignments(self, version, body)

    def serve_list_partition_reassignments(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_reassign.list_partition_reassignments(self, version, body)

    def serve_describe_client_quotas(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_quotas.describe_client_quotas(self, version, body)

    def serve_alter_client_quotas(self, version: int, body: Body, ctx: Any) -> Body:
        return admin_quotas.alter_client_quotas(self, version, body)

    def serve_describe_acls(self, version: int, body: Body, ctx: Any) -> Body:
        return handle_acls(self.zk_client, self.config, ApiKeys.DESCRIBE_ACLS, version, body, ctx)

    def serve_create_acls(self, version: int, body: Body, ctx: Any) -> Body:
        return handle_acls(self.zk_client, self.config, ApiKeys.CREATE_ACLS, version, body, ctx)

    def serve_delete_acls(self, version: int, body: Body, ctx: Any) -> Body:
        return handle_acls(self.zk_client, self.config, ApiKeys.DELETE_ACLS, version, body, ctx)

    def request_authorizer(self, ctx: Any) -> RequestAuthorizer:
        """KafkaApis' authorizer for a request of ``ctx``'s principal and address: AclAuthorizer's decision over the
        ACLs read from ZooKeeper now (this handler's thread has its own session and no cache of the ACLs; a read
        that fails leaves no ACL, so only the super users, or everyone with allow.everyone.if.no.acl.found, pass)."""
        if not authorizer_enabled(self.config["authorizer.class.name"]):
            return ALLOW_ALL
        super_users, allow_everyone = acl_authorizer_configs(self.config.originals)
        try:
            with BlockingZk(self.zk_client) as blocking:
                cache = blocking.run(load_acls())
        except Exception as e:  # noqa: BLE001 - fail closed
            log.error("Cannot read the ACLs: %s", e)
            cache = {}
        authorizer = Authorizer({p: v.acls for p, v in cache.items()}, parse_super_users(super_users), allow_everyone)
        return authorizer.for_request(getattr(ctx, "principal", ANONYMOUS), getattr(ctx, "client_host", ""))

    # -- shared ----------------------------------------------------------------------------------------------------
    def is_controller(self) -> bool:
        """KafkaController.isActive, seen from ZooKeeper: /controller names this broker."""
        try:
            return self.admin.get_controller_id() == self.broker_id
        except (KazooException, ValueError):
            return False

    def wait_until(self, done: Callable[[], bool], timeout_ms: int) -> bool:
        """A delayed operation's wait: True once ``done()`` holds, False if ``timeout_ms`` passes first."""
        deadline = self.clock() + timeout_ms / 1000.0
        while True:
            if done():
                return True
            if self.clock() >= deadline:
                return False
            self.sleep(POLL_S)

    def alive_brokers(self) -> list[BrokerMetadata]:
        """metadataCache.getAliveBrokers as BrokerMetadata (id, rack), sorted by id."""
        return sorted(BrokerMetadata(b.id, b.rack) for b in self.admin.get_all_brokers_in_cluster())

    def has_leader(self, tp: TopicPartition) -> bool:
        state = self.admin.get_topic_partition_state(tp)
        return state is not None and state.leader_and_isr.leader != NO_LEADER

    def broker_view(self) -> BrokerConfigView:
        """This broker's config layers, read now (DynamicBrokerConfig follows the same znodes)."""
        return BrokerConfigView(self.config, self.admin.fetch_entity_config("brokers", str(self.broker_id)),
                                self.admin.fetch_entity_config("brokers", "<default>"))

    # -- CreateTopics ------------------------------------------------------------------------------------------------
    def create_topics(self, version: int, body: Body, auth: RequestAuthorizer = ALLOW_ALL) -> Body:
        """KafkaApis.handleCreateTopicsRequest + AdminManager.createTopics."""
        requested = body.get("topics") or []
        results: dict[str, Body] = {}
        for t in requested:
            results[t["name"]] = {"name": t["name"], "error_code": 0, "error_message": None,
                                  "topic_config_error_code": 0, "num_partitions": -1, "replication_factor": -1,
                                  "configs": None}
        if not self.is_controller():
            for r in results.values():
                r["error_code"] = Errors.NOT_CONTROLLER
            return {"throttle_time_ms": 0, "topics": list(results.values())}
        names = [t["name"] for t in requested]
        creatable, shown = authorize_create_topics(names, auth) if auth.enabled else (set(names), set(names))
        to_create = []
        for t in requested:
            if t["name"] not in shown:
                results[t["name"]].update(topic_config_error_code=Errors.TOPIC_AUTHORIZATION_FAILED)
            if names.count(t["name"]) > 1:
                results[t["name"]].update(error_code=Errors.INVALID_REQUEST,
                                          error_message="Found multiple entries for this topic.")
            elif t["name"] not in creatable:
                results[t["name"]].update(error_code=Errors.TOPIC_AUTHORIZATION_FAILED)
            else:
                to_create.append(t)
        validate_only = bool(body.get("validate_only"))
        started: list[tuple[str, list[int]]] = []
        for t in to_create:
            result = results[t["name"]]
            try:
                partitions = self._create_topic(t, validate_only, result)
                started.append((t["name"], partitions))
            except Exception as e:  # noqa: BLE001 - every failure is the topic's answer (ApiError.fromThrowable)
                error, message = api_error(e)
                result.update(error_code=error, error_message=message, configs=[], num_partitions=-1,
                              replication_factor=-1)
        timeout_ms = int(body.get("timeout_ms", 0))
        if not validate_only:
            self._wait_for_leaders([(n, ps) for n, ps in started], timeout_ms, results)
        return {"throttle_time_ms": 0, "topics": list(results.values())}

    def _create_topic(self, t: Body, validate_only: bool, result: Body) -> list[int]:
        """One topic of AdminManager.createTopics: checks, assignment, validateTopicCreate, the v5 metadata, the
        write. Returns the partition ids."""
        name = t["name"]
        topic_name.validate(name)
        if self.admin.topic_exists(name):
            raise TopicExistsException(f"Topic '{name}' already exists.")
        configs = t.get("configs") or []
        null_configs = [c["name"] for c in configs if c.get("value") is None]
        if null_configs:
            raise InvalidRequestException(f"Null value not supported for topic configs : {','.join(null_configs)}")
        num_partitions = t.get("num_partitions", NO_NUM_PARTITIONS)
        replication_factor = t.get("replication_factor", NO_REPLICATION_FACTOR)
        assignments = t.get("assignments") or []
        if (num_partitions != NO_NUM_PARTITIONS or replication_factor != NO_REPLICATION_FACTOR) and assignments:
            raise InvalidRequestException("Both numPartitions or replicationFactor and replicasAssignments were set. "
                                          "Both cannot be used at the same time.")
        if assignments:
            assignment = {a["partition_index"]: list(a["broker_ids"]) for a in assignments}
        else:
            n = self.config["num.partitions"] if num_partitions == NO_NUM_PARTITIONS else num_partitions
            rf = self.config["default.replication.factor"] if replication_factor == NO_REPLICATION_FACTOR \
                else replication_factor
            assignment = assign_replicas_to_brokers(self.alive_brokers(), n, rf)
        props = {c["name"]: c["value"] for c in configs}
        self.admin.validate_topic_create(name, assignment, props)
        result["configs"] = [
            {"name": e["name"], "value": e["value"], "read_only": e["read_only"],
             "config_source": e["config_source"], "is_sensitive": e["is_sensitive"]}
            for e in topic_config_entries(self.broker_view(), props, include_synonyms=False)]
        result["num_partitions"] = len(assignment)
        result["replication_factor"] = len(assignment[0]) if 0 in assignment else len(next(iter(assignment.values())))
        if not validate_only:
            self.admin.create_topic_with_assignment(name, props, assignment, validate=False)
        return sorted(assignment)

    def _wait_for_leaders(self, started: Sequence[tuple[str, Sequence[int]]], timeout_ms: int,
                          results: Mapping[str, Body]) -> None:
        """DelayedCreatePartitions: done when every new partition has a leader; what is not done by ``timeout_ms``
        (at once when it is <= 0) answers REQUEST_TIMED_OUT."""
        pending = {TopicPartition(n, p) for n, ps in started for p in ps}

        def done() -> bool:
            for tp in sorted(pending):
                if self.has_leader(tp):
                    pending.discard(tp)
            return not pending

        if timeout_ms <= 0 or not self.wait_until(done, timeout_ms):
            for topic in sorted({tp.topic for tp in pending} if timeout_ms > 0 else {n for n, _ in started}):
                results[topic].update(error_code=Errors.REQUEST_TIMED_OUT, error_message=None)

    # -- DeleteTopics ------------------------------------------------------------------------------------------------
    def delete_topics(self, version: int, body: Body, auth: RequestAuthorizer = ALLOW_ALL) -> Body:
        """KafkaApis.handleDeleteTopicsRequest + AdminManager.deleteTopics: mark each topic for deletion and wait,
        up to ``timeout_ms``, for it to be gone (DelayedDeleteTopics)."""
        names = list(dict.fromkeys(body.get("topic_names") or []))
        results = {n: {"name": n, "error_code": 0} for n in names}
        if not self.is_controller():
            for r in results.values():
                r["error_code"] = Errors.NOT_CONTROLLER
            return {"throttle_time_ms": 0, "responses": list(results.values())}
        if not self.config["delete.topic.enable"]:
            error = Errors.INVALID_REQUEST if version < 3 else Errors.TOPIC_DELETION_DISABLED
            for r in results.values():
                r["error_code"] = error
            return {"throttle_time_ms": 0, "responses": list(results.values())}
        marked = []
        deletable = authorize_delete_topics(names, auth) if auth.enabled else set(names)
        for n in names:
            if n not in deletable:
                results[n]["error_code"] = Errors.TOPIC_AUTHORIZATION_FAILED
                continue
            if not topic_name.is_valid(n) or not self.admin.topic_exists(n):
                results[n]["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            try:
                self.admin.delete_topic(n)
            except TopicAlreadyMarkedForDeletionException:
                pass  # still tracked, so that several calls can wait for the same deletion
            except Exception as e:  # noqa: BLE001 - Errors.forException
                results[n]["error_code"] = api_error(e)[0]
                continue
            marked.append(n)
        timeout_ms = int(body.get("timeout_ms", 0))
        pending = set(marked)

        def done() -> bool:
            for n in sorted(pending):
                if not self.admin.topic_exists(n):
                    pending.discard(n)
            return not pending

        if timeout_ms <= 0 or not marked or not self.wait_until(done, timeout_ms):
            for n in (pending if timeout_ms > 0 else marked):
                results[n]["error_code"] = Errors.REQUEST_TIMED_OUT
        return {"throttle_time_ms": 0, "responses": list(results.values())}

    # -- CreatePartitions --------------------------------------------------------------------------------------------
    def create_partitions(self, version: int, body: Body) -> Body:
        """KafkaApis.handleCreatePartitionsRequest + AdminManager.createPartitions."""
        topics = body.get("topics") or []
        results = {t["name"]: {"name": t["name"], "error_code": 0, "error_message": None} for t in topics}
        if not self.is_controller():
            for r in results.values():
                r["error_code"] = Errors.NOT_CONTROLLER
            return {"throttle_time_ms": 0, "results": list(results.values())}
        names = [t["name"] for t in topics]
        validate_only = bool(body.get("validate_only"))
        started: list[tuple[str, list[int]]] = []
        deleting = set(self.admin.get_topic_deletions())
        for t in topics:
            name = t["name"]
            if names.count(name) > 1:
                results[name].update(error_code=Errors.INVALID_REQUEST, error_message="Duplicate topic in request.")
                continue
            if name in deleting:
                results[name].update(error_code=Errors.INVALID_TOPIC_EXCEPTION,
                                     error_message="The topic is queued for deletion.")
                continue
            try:
                started.append((name, self._create_partitions(t, validate_only)))
            except Exception as e:  # noqa: BLE001 - ApiError.fromThrowable
                error, message = api_error(e)
                results[name].update(error_code=error, error_message=message)
        if not validate_only:
            self._wait_for_leaders(started, int(body.get("timeout_ms", 0)), results)
        return {"throttle_time_ms": 0, "results": list(results.values())}

    def _create_partitions(self, t: Body, validate_only: bool) -> list[int]:
        """One topic of AdminManager.createPartitions: the new partitions' ids."""
        name = t["name"]
        existing = self.admin.get_full_replica_assignment(name)
        if any(ra.adding_replicas or ra.removing_replicas for ra in existing.values()):
            raise ReassignmentInProgressException(f"A partition reassignment is in progress for the topic '{name}'.")
        if not existing:
            raise UnknownTopicOrPartitionException(f"The topic '{name}' does not exist.")
        old, new = len(existing), int(t["count"])
        if new < old:
            raise InvalidPartitionsException(f"Topic currently has {old} partitions, which is higher than the "
                                             f"requested {new}.")
        if new == old:
            raise InvalidPartitionsException(f"Topic already has {old} partitions.")
        brokers = self.alive_brokers()
        manual = None
        if t.get("assignments") is not None:
            lists = [list(a["broker_ids"]) for a in t["assignments"]]
            unknown = sorted({b for r in lists for b in r} - {b.id for b in brokers})
            if unknown:
                raise InvalidReplicaAssignmentException(
                    f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
            if len(lists) != new - old:
                raise InvalidReplicaAssignmentException(
                    f"Increasing the number of partitions by {new - old} but {len(lists)} assignments provided.")
            manual = {old + i: r for i, r in enumerate(lists)}
        combined = self.admin.add_partitions(name, existing, brokers, new, manual, validate_only=validate_only)
        return [p for p in combined if p >= old]
