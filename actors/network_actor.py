"""NetworkActor ("net"): hands NetSend / NetReply / NetClose to the transport edge.

Like the timer actor it makes every network action a traced message: the NetSend's seq travels with the request
inside the transport and becomes the cause of the NetResponse / NetSendFailed injected later. In replay there is no
transport, so this actor does nothing and the recorded NetResponse / NetRequest inputs stand in for the network.
"""

from __future__ import annotations

from actors.base import KActor
from actors.edge_slots import Network
from messages.credentials import UserCredentialsChanged
from messages.net import NetClose, NetReply, NetSend
from messages.quota import ClientQuotaConfigChanged


class NetworkActor(KActor):
    """The actor named "net": the actor-side face of `edges.transport.Transport`."""

    def _transport(self) -> Network | None:
        return self.runtime.edges.net

    def on_NetSend(self, msg: NetSend, sender: str) -> None:
        transport = self.runtime.edges.net  # _transport, inline: one of the busiest handlers
        if transport is not None:
            transport.send(msg.host, msg.port, msg.to, msg.body, msg.request_id, msg.reply_to,
                           cause=self.runtime.current_seq, timeout_ms=msg.timeout_ms)

    def on_NetReply(self, msg: NetReply, sender: str) -> None:
        transport = self.runtime.edges.net  # _transport, inline
        if transport is not None:
            transport.reply(msg.connection_id, msg.request_id, msg.body)

    def on_NetClose(self, msg: NetClose, sender: str) -> None:
        transport = self._transport()
        if transport is not None:
            transport.close_destination(msg.host, msg.port)

    def on_ClientQuotaConfigChanged(self, msg: ClientQuotaConfigChanged, sender: str) -> None:
        """QuotaConfigHandler: the transport's quota managers take the entity's new quotas."""
        transport = self._transport()
        update = getattr(transport, "update_client_quota", None)
        if update is not None:
            update(msg)

    def on_UserCredentialsChanged(self, msg: UserCredentialsChanged, sender: str) -> None:
        """CredentialProvider.updateCredentials: the SASL listeners' CredentialCache takes the user's credentials."""
        transport = self._transport()
        update = getattr(transport, "update_credentials", None)
        if update is not None:
            update(msg)
