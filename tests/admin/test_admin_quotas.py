"""DescribeClientQuotas / AlterClientQuotas (zk_bridge/admin/admin_quotas.py) on a real ZooKeeper: the znodes and
change notifications Kafka 2.6.3's AdminManager writes, its filters' semantics and its error codes."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient
from test_admin_manager import Clock, manager

import core.api.client_quotas  # noqa: F401 - registers keys 48 and 49
from messages.common import Errors
from protocol.zk import paths
from zk_bridge.admin.admin_manager import AdminManager
from zk_bridge.admin.admin_quotas import java_double_to_string

DESCRIBE, ALTER = 48, 49


@pytest.fixture
def m(zk: KazooClient) -> AdminManager:
    return manager(zk, Clock())


def entity(**names: str | None) -> list[dict]:
    return [{"entity_type": t.replace("_", "-"), "entity_name": n} for t, n in names.items()]


def op(key: str, value: float = 0.0, remove: bool = False) -> dict:
    return {"key": key, "value": value, "remove": remove}


def alter(m: AdminManager, *entries: tuple[list[dict], list[dict]], validate_only: bool = False) -> list[tuple]:
    r = m.handle(ALTER, 0, {"entries": [{"entity": e, "ops": o} for e, o in entries], "validate_only": validate_only})
    return [({x["entity_type"]: x["entity_name"] for x in e["entity"]}, e["error_code"], e["error_message"])
            for e in r["entries"]]


def describe(m: AdminManager, *components: tuple[str, int, str | None], strict: bool = False) -> dict:
    return m.handle(DESCRIBE, 0, {"components": [{"entity_type": t, "match_type": mt, "match": n}
                                                 for t, mt, n in components], "strict": strict})


def entries(r: dict) -> dict:
    assert r["error_code"] == 0, r
    return {tuple(sorted((e["entity_type"], e["entity_name"]) for e in x["entity"])):
            {v["key"]: v["value"] for v in x["values"]} for x in r["entries"]}


def znode(zk: KazooClient, path: str) -> dict:
    return json.loads(zk.get(path)[0])


def notifications(zk: KazooClient) -> list[str]:
    root = paths.ConfigEntityChangeNotificationZNode
    return [json.loads(zk.get(f"{root}/{n}")[0])["entity_path"] for n in sorted(zk.get_children(root))]


def test_alter_writes_kafkas_znodes_and_notifications(m, zk):
    assert alter(m, (entity(client_id="app 1"), [op("producer_byte_rate", 1048576)]),
                 (entity(user="alice"), [op("consumer_byte_rate", 2000), op("request_percentage", 12.5)]),
                 (entity(user="alice", client_id=None), [op("producer_byte_rate", 300)]),
                 (entity(user=None), [op("request_percentage", 200)])) == [
        ({"client-id": "app 1"}, 0, None), ({"user": "alice"}, 0, None),
        ({"user": "alice", "client-id": None}, 0, None), ({"user": None}, 0, None)]
    assert znode(zk, "/config/clients/app%201") == {"version": 1, "config": {"producer_byte_rate": "1048576"}}
    assert znode(zk, "/config/users/alice") == {"version": 1, "config": {"consumer_byte_rate": "2000",
                                                                           "request_percentage": "12.5"}}
    assert znode(zk, "/config/users/alice/clients/<default>") == {"version": 1,
                                                                  "config": {"producer_byte_rate": "300"}}
    assert znode(zk, "/config/users/<default>") == {"version": 1, "config": {"request_percentage": "200.0"}}
    assert notifications(zk) == ["clients/app%201", "users/alice", "users/alice/clients/<default>",
                                 "users/<default>"]
    # a removal keeps the other keys; the node stays (with an empty config once nothing is left)
    assert alter(m, (entity(user="alice"), [op("consumer_byte_rate", remove=True)])) == [({"user": "alice"}, 0, None)]
    assert znode(zk, "/config/users/alice")["config"] == {"request_percentage": "12.5"}
    assert alter(m, (entity(client_id="app 1"), [op("producer_byte_rate", remove=True)]))[0][1] == 0
    assert znode(zk, "/config/clients/app%201") == {"version": 1, "config": {}}


def test_validate_only_writes_nothing(m, zk):
    assert alter(m, (entity(client_id="c"), [op("producer_byte_rate", 10)]), validate_only=True) == \
        [({"client-id": "c"}, 0, None)]
    assert not zk.exists("/config/clients/c")
    assert alter(m, (entity(client_id="c"), [op("producer_byte_rate", 10.5)]), validate_only=True)[0][1] == \
        Errors.INVALID_REQUEST


def test_alter_errors_per_entity(m, zk):
    r = alter(m, (entity(client_id="ok"), [op("producer_byte_rate", 5)]),
              ([], [op("producer_byte_rate", 5)]),
              (entity(client_id=""), [op("producer_byte_rate", 5)]),
              ([{"entity_type": "ip", "entity_name": "1.2.3.4"}], [op("producer_byte_rate", 5)]),
              (entity(user="u"), [op("no.such.key", 5)]),
              (entity(user="v"), [op("producer_byte_rate", 1.5)]),
              (entity(user="w"), [op("SCRAM-SHA-256", 1)]))
    assert r == [({"client-id": "ok"}, 0, None),
                 ({}, Errors.INVALID_REQUEST, "Invalid empty client quota entity"),
                 ({"client-id": ""}, Errors.INVALID_REQUEST, "Empty client-id not supported"),
                 ({"ip": "1.2.3.4"}, Errors.INVALID_REQUEST, "Unhandled client quota entity type: ip"),
                 ({"user": "u"}, Errors.INVALID_REQUEST, "Invalid configuration key no.such.key"),
                 ({"user": "v"}, Errors.INVALID_REQUEST, "Configuration producer_byte_rate must be a Long value"),
                 ({"user": "w"}, Errors.UNKNOWN_SERVER_ERROR, None)]
    assert zk.get_children("/config/clients") == ["ok"]
    assert not zk.exists("/config/users/u") and not zk.exists("/config/users/v")
    # removing a key Kafka does not know is accepted (the value is null: nothing to check)
    assert alter(m, (entity(user="u"), [op("no.such.key", remove=True)])) == [({"user": "u"}, 0, None)]


def test_describe_filters_as_kafka(m, zk):
    alter(m, (entity(client_id="c1"), [op("producer_byte_rate", 100)]),
          (entity(client_id=None), [op("producer_byte_rate", 50)]),
          (entity(user="alice"), [op("consumer_byte_rate", 200)]),
          (entity(user="alice", client_id="c1"), [op("request_percentage", 25)]),
          (entity(user=None, client_id=None), [op("producer_byte_rate", 7)]))
    everything = {(("client-id", "c1"),): {"producer_byte_rate": 100.0},
                  (("client-id", None),): {"producer_byte_rate": 50.0},
                  (("user", "alice"),): {"consumer_byte_rate": 200.0},
                  (("client-id", "c1"), ("user", "alice")): {"request_percentage": 25.0},
                  (("client-id", None), ("user", None)): {"producer_byte_rate": 7.0}}
    assert entries(describe(m)) == everything
    # any client id, not strict: the entities with a client id (alone or with a user)
    assert entries(describe(m, ("client-id", 2, None))) == {k: v for k, v in everything.items()
                                                            if any(t == "client-id" for t, _ in k)}
    # exactly c1, strict: only the <client-id> entity
    assert entries(describe(m, ("client-id", 0, "c1"), strict=True)) == {(("client-id", "c1"),):
                                                                         {"producer_byte_rate": 100.0}}
    # the default client id, not strict
    assert entries(describe(m, ("client-id", 1, None))) == {
        (("client-id", None),): {"producer_byte_rate": 50.0},
        (("client-id", None), ("user", None)): {"producer_byte_rate": 7.0}}
    # user alice and client c1 exactly
    assert entries(describe(m, ("user", 0, "alice"), ("client-id", 0, "c1"))) == {
        (("client-id", "c1"), ("user", "alice")): {"request_percentage": 25.0}}
    # strict with no component: nothing
    assert entries(describe(m, strict=True)) == {}


def test_describe_errors(m):
    def top(r: dict) -> tuple:
        return r["error_code"], r["error_message"], r["entries"]

    assert top(describe(m, ("user", 2, None), ("user", 0, "x"))) == (
        Errors.INVALID_REQUEST, "Duplicate user filter component entity type", None)
    assert top(describe(m, ("", 2, None))) == (
        Errors.INVALID_REQUEST, "Unexpected empty filter component entity type", None)
    assert top(describe(m, ("ip", 2, None))) == (
        Errors.UNSUPPORTED_VERSION, "Custom entity type 'ip' not supported", None)
    assert top(describe(m, ("user", 7, None)))[0] == Errors.UNKNOWN_SERVER_ERROR
    assert top(describe(m, ("user", 0, None)))[0] == Errors.UNKNOWN_SERVER_ERROR  # ofEntity(type, null): NPE


def test_java_double_to_string():
    assert [java_double_to_string(v) for v in (12.5, 200.0, 0.001, 1e7, 1.5e-4, 123456789.0, 0.0)] == \
        ["12.5", "200.0", "0.001", "1.0E7", "1.5E-4", "1.23456789E8", "0.0"]
