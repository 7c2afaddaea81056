"""The admin APIs, served by the AdminManager edge handler (route "edge:admin"): CreateTopics, DeleteTopics,
CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, ElectLeaders, AlterPartitionReassignments,
ListPartitionReassignments (and InitProducerId, core/api/init_producer_id.py).

Kafka's AdminManager works on the request's generated data objects; so does the handler here: the decoded body is the
request (``request_from_wire`` passes it through, in an `AdminRequest` naming the API and version, since one handler
serves them all), and the handler answers with a body holding every field of the
API's newest version, which ``response_to_wire`` fits to the request's version (`fit_response`: a field the version
does not have is left out, as Kafka's generated writers skip it; DescribeConfigs v0's ``is_default`` is what the
handler computes for it). ``error_response`` is Kafka's ``getErrorResponse`` of each request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from core.api.registry import AdminService, ApiSpec, RequestContext, register
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import RequestAuthorizer
from messages.common import Errors
from protocol.api_versions import ApiKeys
from protocol.schema import StructSpec, message_spec

Body = dict[str, Any]



def fit(spec: StructSpec, value: Body) -> Body:
    """``value`` with only the fields ``spec`` has, recursively (struct arrays item by item)."""
    out: Body = {}
    for f in spec.fields:
        if f.name not in value:
            continue
        v = value[f.name]
        if f.kind == "struct_array" and v is not None and f.struct is not None:
            v = [fit(f.struct, item) for item in v]
        elif f.kind == "struct" and v is not None and f.struct is not None:
            v = fit(f.struct, v)
        out[f.name] = v
    return out


def fit_response(api_key: int, version: int, body: Body) -> Body:
    """The handler's answer as the response of ``version``."""
    return fit(message_spec(api_key, version, "response"), body)


@attrs.frozen(slots=True)
class AdminRequest:
    """A request for the admin handler: the decoded body as it is, with its api key and version."""

    api_key: int
    version: int
    body: Body = attrs.field(eq=False)


def passthrough(api_key: int) -> Callable[[int, Body, RequestContext], AdminRequest]:
    """The decoded request is what the AdminManager takes."""
    return lambda version, body, ctx: AdminRequest(api_key, version, body)


def _response_to_wire(api_key: int) -> Callable[[int, Any], Body]:
    return lambda version, body: fit_response(api_key, version, body)


# -- error responses (AbstractRequest.getErrorResponse of each request) ------------------------------------------------
def create_topics_error(version: int, body: Body, error_code: int) -> Body:
    return fit_response(ApiKeys.CREATE_TOPICS, version, {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "error_code": error_code, "error_message": None} for t in body.get("topics") or []]})


def delete_topics_error(version: int, body: Body, error_code: int) -> Body:
    return fit_response(ApiKeys.DELETE_TOPICS, version, {"throttle_time_ms": 0, "responses": [
        {"name": n, "error_code": error_code} for n in body.get("topic_names") or []]})


def create_partitions_error(version: int, body: Body, error_code: int) -> Body:
    return fit_response(ApiKeys.CREATE_PARTITIONS, version, {"throttle_time_ms": 0, "results": [
        {"name": t["name"], "error_code": error_code, "error_message": None} for t in body.get("topics") or []]})


def describe_configs_error(version: int, body: Body, error_code: int) -> Body:
    return fit_response(ApiKeys.DESCRIBE_CONFIGS, version, {"throttle_time_ms": 0, "results": [
        {"error_code": error_code, "error_message": None, "resource_type": r["resource_type"],
         "resource_name": r["resource_name"], "configs": []} for r in body.get("resources") or []]})


def _alter_configs_error(api_key: int) -> Callable[[int, Body, int], Body]:
    def error(version: int, body: Body, error_code: int) -> Body:
        return fit_response(api_key, version, {"throttle_time_ms": 0, "responses": [
            {"error_code": error_code, "error_message": None, "resource_type": r["resource_type"],
             "resource_name": r["resource_name"]} for r in body.get("resources") or []]})
    return error


def authorize_create_topics(names: Iterable[str], auth: RequestAuthorizer) -> tuple[set[str], set[str]]:
    """KafkaApis.handleCreateTopicsRequest's authorization: the topics that may be created (CREATE on the Cluster,
    else on each topic; the others answer TOPIC_AUTHORIZATION_FAILED) and those whose configs the answer may show
    (DESCRIBE_CONFIGS on the topic; the others' topic_config_error_code is TOPIC_AUTHORIZATION_FAILED)."""
    names = set(names)
    creatable = names if auth.allows_cluster(AclOperation.CREATE) else \
        auth.filter(AclOperation.CREATE, ResourceType.TOPIC, names)
    return set(creatable), auth.filter(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names)


def authorize_delete_topics(names: Iterable[str], auth: RequestAuthorizer) -> set[str]:
    """KafkaApis.handleDeleteTopicsRequest's authorization: the topics that may be deleted (DELETE on each; the
    others answer TOPIC_AUTHORIZATION_FAILED before their existence is checked)."""
    return auth.filter(AclOperation.DELETE, ResourceType.TOPIC, names)


CONFIG_TOPIC, CONFIG_BROKER, CONFIG_BROKER_LOGGER = 2, 4, 8  # ConfigResource.Type codes


def authorize_config_resources(resources: Iterable[Body], operation: AclOperation, auth: RequestAuthorizer,
                               with_configs: bool) -> tuple[list[Body], list[Body]]:
    """KafkaApis.handleDescribeConfigsRequest / handleAlterConfigsRequest / handleIncrementalAlterConfigsRequest:
    ``operation`` (DESCRIBE_CONFIGS or ALTER_CONFIGS) on the Cluster for a broker or broker-logger resource
    (CLUSTER_AUTHORIZATION_FAILED), on the topic for a topic (TOPIC_AUTHORIZATION_FAILED). Returns the resources to
    serve and the refused ones' results (``configs`` empty for DescribeConfigs)."""
    served: list[Body] = []
    refused_results: list[Body] = []
    for r in resources:
        kind, name = r["resource_type"], r["resource_name"]
        if kind in (CONFIG_BROKER, CONFIG_BROKER_LOGGER):
            error = None if auth.allows_cluster(operation) else Errors.CLUSTER_AUTHORIZATION_FAILED
        elif kind == CONFIG_TOPIC:
            error = None if auth.allows(operation, ResourceType.TOPIC, name) else Errors.TOPIC_AUTHORIZATION_FAILED
        else:
            error = None  # an unknown type: the handler's INVALID_REQUEST
        if error is None:
            served.append(r)
            continue
        result: Body = {"error_code": int(error), "error_message": None, "resource_type": kind, "resource_name": name}
        if with_configs:
            result["configs"] = []
        refused_results.append(result)
    return served, refused_results


def authorize_create_partitions(names: Iterable[str], auth: RequestAuthorizer) -> set[str]:
    """KafkaApis.handleCreatePartitionsRequest: ALTER on each topic (the others TOPIC_AUTHORIZATION_FAILED)."""
    return auth.filter(AclOperation.ALTER, ResourceType.TOPIC, names)


def elect_leaders_error(version: int, body: Body, error_code: int) -> Body:
    """ElectLeadersRequest.getErrorResponse: every named partition with the error, and the error at the top (v1+)."""
    return fit_response(ApiKeys.ELECT_LEADERS, version, {"throttle_time_ms": 0, "error_code": error_code,
                                                 "replica_election_results": [
        {"topic": t["topic"], "partition_result": [
            {"partition_id": p, "error_code": error_code, "error_message": None} for p in t["partitions"]]}
        for t in body.get("topic_partitions") or []]})


def _top_level_error(api_key: int, items: str) -> Callable[[int, Body, int], Body]:
    def error(version: int, body: Body, error_code: int) -> Body:
        return fit_response(api_key, version, {"throttle_time_ms": 0, "error_code": error_code,
                                               "error_message": None, items: []})
    return error


def _unit(api_key: ApiKeys, service: AdminService, error: Callable[[int, Body, int], Body]) -> ApiSpec:
    return ApiSpec(api_key, service, passthrough(api_key), _response_to_wire(api_key), error)


# each admin API: the AdminManager method serving it, KafkaApis' authorization of it, its error answer
register(_unit(ApiKeys.CREATE_TOPICS, AdminService("serve_create_topics"), create_topics_error))
register(_unit(ApiKeys.DELETE_TOPICS, AdminService("serve_delete_topics"), delete_topics_error))
register(_unit(ApiKeys.CREATE_PARTITIONS, AdminService("serve_create_partitions"), create_partitions_error))
register(_unit(ApiKeys.DESCRIBE_CONFIGS, AdminService("serve_describe_configs",
                                                      config_operation=AclOperation.DESCRIBE_CONFIGS,
                                                      config_results="results"), describe_configs_error))
register(_unit(ApiKeys.ALTER_CONFIGS, AdminService("serve_alter_configs", config_operation=AclOperation.ALTER_CONFIGS,
                                                   config_results="responses"),
               _alter_configs_error(ApiKeys.ALTER_CONFIGS)))
register(_unit(ApiKeys.INCREMENTAL_ALTER_CONFIGS, AdminService(
    "serve_incremental_alter_configs", config_operation=AclOperation.ALTER_CONFIGS, config_results="responses"),
    _alter_configs_error(ApiKeys.INCREMENTAL_ALTER_CONFIGS)))
register(_unit(ApiKeys.ELECT_LEADERS, AdminService("serve_elect_leaders", cluster_operation=AclOperation.ALTER),
               elect_leaders_error))
register(_unit(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, AdminService("serve_alter_partition_reassignments",
                                                                   cluster_operation=AclOperation.ALTER),
               _top_level_error(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, "responses")))
register(_unit(ApiKeys.LIST_PARTITION_REASSIGNMENTS, AdminService("serve_list_partition_reassignments",
                                                                  cluster_operation=AclOperation.DESCRIBE),
               _top_level_error(ApiKeys.LIST_PARTITION_REASSIGNMENTS, "topics")))
