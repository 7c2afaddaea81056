"""The broker's DynamicConfigManager for quota entities (ClientIdConfigHandler, UserConfigHandler): a change
notification for /config/clients/<c>, /config/users/<u> or /config/users/<u>/clients/<c> becomes the quota change
the "net" actor hands to the transport's quota managers, and start-up applies every existing quota entity."""

from __future__ import annotations

from freezegun import freeze_time
from test_dynamic_config import manager, notify, run, set_config, timed_zk

from messages.quota import ClientQuotaConfigChanged
from tests.support.broker import emitted


def test_quota_notifications_reach_the_network_edge() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "clients", "app%201", {"producer_byte_rate": "1048576"})
        set_config(zk, "users", "alice", {"consumer_byte_rate": "2000"})
        set_config(zk, "users", "alice/clients/<default>", {"request_percentage": "50.0"})
        for path in ("clients/app%201", "users/alice", "users/alice/clients/<default>", "users/a/b"):
            notify(zk, path)
        effects = run(mgr, zk)
        assert emitted(effects, "net") == [
            ClientQuotaConfigChanged(None, "app%201", (("producer_byte_rate", "1048576"),)),
            ClientQuotaConfigChanged("alice", None, (("consumer_byte_rate", "2000"),)),
            ClientQuotaConfigChanged("alice", "<default>", (("request_percentage", "50.0"),)),
        ]  # "users/a/b" is no quota entity path: logged and skipped, as Kafka's handler refuses it
        assert mgr.last_executed_change == 3


def test_a_removed_quota_is_an_empty_config() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "clients", "c", {})
        notify(zk, "clients/c")
        assert [e.change for e in run(mgr, zk)] == [ClientQuotaConfigChanged(None, "c", ())]


def test_startup_applies_every_existing_quota_entity() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "clients", "<default>", {"producer_byte_rate": "10"})
        set_config(zk, "users", "<default>/clients/<default>", {"consumer_byte_rate": "20"})
        set_config(zk, "users", "bob", {"request_percentage": "30"})
        effects = run(mgr, zk, mgr.startup())
        assert [e.change for e in effects if isinstance(getattr(e, "change", None), ClientQuotaConfigChanged)] == [
            ClientQuotaConfigChanged(None, "<default>", (("producer_byte_rate", "10"),)),
            ClientQuotaConfigChanged("<default>", None, ()),  # the parent made on the way: an empty config
            ClientQuotaConfigChanged("bob", None, (("request_percentage", "30"),)),
            ClientQuotaConfigChanged("<default>", "<default>", (("consumer_byte_rate", "20"),)),
        ]
