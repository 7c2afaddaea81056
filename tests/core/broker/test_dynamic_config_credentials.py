"""The broker's DynamicConfigManager feeding the SCRAM CredentialCache, as Kafka 2.6.3's UserConfigHandler calls
CredentialProvider.updateCredentials: start-up reads every /config/users/<user>, then each user change notification
re-reads its user; the <default> user and <user, client-id> entities hold quotas only, and the user is named as a
client logs in (desanitized)."""

from __future__ import annotations

from freezegun import freeze_time
from test_dynamic_config import manager, notify, run, set_config, timed_zk

from messages.credentials import UserCredentialsChanged
from messages.quota import ClientQuotaConfigChanged

CRED = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"


def credentials(effects: list) -> list[UserCredentialsChanged]:
    return [e for e in effects if isinstance(e, UserCredentialsChanged)]


def test_startup_reads_every_users_credentials() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "users", "alice", {"SCRAM-SHA-512": CRED, "consumer_byte_rate": "10"})
        set_config(zk, "users", "bob%40example.com", {"SCRAM-SHA-256": CRED})
        set_config(zk, "users", "<default>", {"producer_byte_rate": "10"})
        set_config(zk, "users", "carol", {})
        set_config(zk, "users", "carol/clients/app", {"request_percentage": "50"})
        assert credentials(run(mgr, zk, mgr.startup())) == [
            UserCredentialsChanged("alice", (("SCRAM-SHA-512", CRED),)),
            UserCredentialsChanged("bob@example.com", (("SCRAM-SHA-256", CRED),)),
            UserCredentialsChanged("carol", ()),
        ]


def test_a_user_change_notification_updates_or_removes_the_users_credentials() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "users", "alice", {"SCRAM-SHA-256": CRED, "SCRAM-SHA-512": CRED})
        notify(zk, "users/alice")
        effects = run(mgr, zk)
        # the quota first, as UserConfigHandler.processConfigChanges does, then the credentials
        assert [type(getattr(e, "change", e)).__name__ for e in effects] == [
            ClientQuotaConfigChanged.__name__, UserCredentialsChanged.__name__]
        assert credentials(effects) == [UserCredentialsChanged("alice", (("SCRAM-SHA-256", CRED),
                                                                         ("SCRAM-SHA-512", CRED)))]
        zk.delete("/config/users/alice")  # kactor configs --delete-config of both: the znode goes
        notify(zk, "users/alice")
        notify(zk, "users/<default>")
        notify(zk, "users/alice/clients/app")
        assert credentials(run(mgr, zk)) == [UserCredentialsChanged("alice", ())]
