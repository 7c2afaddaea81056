"""The broker's SCRAM credential cache, as Kafka 2.6.3's ``CredentialCache`` filled by ``CredentialProvider``
(security/CredentialProvider.scala) from the ``UserConfigHandler`` (server/ConfigHandler.scala): loaded from every
``/config/users/<user>`` at start-up, then updated by each ``/config/changes`` notification of a user entity. The
SASL SCRAM server reads it (ScramServerCallbackHandler), so an authentication never waits on ZooKeeper and keeps
working while ZooKeeper is unreachable; a user added, changed or deleted counts once its change notification has been
processed.

One thread writes (the broker's start-up, then the "net" actor's) and the SASL thread reads. A reader only ever
looks one user up, and a dict's single put, pop and get are atomic in CPython, so a lookup sees a user's credential
before or after an update, never half of one: what a reader needs of Kafka's ConcurrentHashMap, without a copy of the
whole map on each of the start-up's thousands of updates.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from core.security.scram import ScramCredential, ScramMechanism, credential_from_string

log = logging.getLogger("kactor.security")


def scram_entries(config: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The SCRAM entries of a user's config (``SCRAM-SHA-256`` / ``SCRAM-SHA-512`` → credential text), in
    ScramMechanism's order: what CredentialProvider.updateCredentials reads of it (the quotas are not its)."""
    return tuple((m.mechanism_name, config[m.mechanism_name]) for m in ScramMechanism if m.mechanism_name in config)


class CredentialCache:
    """CredentialCache with ScramCredentialUtils.createCache's one cache per SCRAM mechanism (``mechanisms``:
    KafkaServer creates them for every ScramMechanism). Called as ``cache(user, mechanism)`` it is the SASL server's
    credential lookup (core.security.sasl.CredentialLookup)."""

    def __init__(self, mechanisms: Iterable[ScramMechanism] = tuple(ScramMechanism)) -> None:
        self._caches: dict[ScramMechanism, dict[str, ScramCredential]] = {m: {} for m in mechanisms}

    def __call__(self, username: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self.get(username, mechanism)

    def get(self, username: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """CredentialCache.cache(mechanism).get(username): None for a user without a credential of that mechanism
        (the SCRAM server then fails the exchange as for a wrong password)."""
        cache = self._caches.get(mechanism)
        return None if cache is None else cache.get(username)

    def update_credentials(self, username: str, config: Mapping[str, str]) -> None:
        """CredentialProvider.updateCredentials: for each mechanism, the credential ``config`` holds replaces the
        cached one, and a mechanism absent from ``config`` removes it. A credential text that does not parse leaves
        that mechanism's cached credential as it was (Kafka's credentialFromString throws before its put) and is
        logged."""
        for mechanism, cache in self._caches.items():
            text = config.get(mechanism.mechanism_name)
            if text is None:
                cache.pop(username, None)
                continue
            try:
                credential = credential_from_string(text)
            except ValueError as e:
                log.error("Cannot update the %s credential of user %s: %s", mechanism.mechanism_name, username, e)
                continue
            cache[username] = credential

    def users(self, mechanism: ScramMechanism) -> frozenset[str]:
        """The users holding a credential of ``mechanism`` (for the writer's thread: it iterates the map)."""
        return frozenset(self._caches.get(mechanism, {}))
