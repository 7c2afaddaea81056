"""Messages of the SCRAM credential cache: the config manager tells the network edge (through the "net" actor) a
user's SCRAM credentials as ``/config/users/<user>`` now holds them, as Kafka 2.6.3's UserConfigHandler tells its
CredentialProvider."""

from __future__ import annotations

from messages.registry import message


@message
class UserCredentialsChanged:
    """CredentialProvider.updateCredentials' input: ``user`` (desanitized, the name a client logs in with) and the
    SCRAM entries of its config (mechanism name → credential text, ScramCredentialUtils' format). A mechanism absent
    here has no credential any more, so an empty tuple removes the user."""

    user: str
    credentials: tuple[tuple[str, str], ...] = ()
