"""actors.runtime.Runtime.unregister: what the edges still deliver to an actor stopped on purpose (a removed broker's
channel, whose stop closed its connection and so failed its last request) is dropped; a name no actor ever had is
still an error, and a name registered again receives again."""

from __future__ import annotations

import pytest

from actors import names
from actors.base import KActor
from actors.runtime import Runtime
from messages.net import NetSendFailed


class _Channel(KActor):
    got: list[tuple[str, object]] = []

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        _Channel.got.append((self.name, msg))


def test_an_input_for_a_stopped_channel_is_dropped_and_one_for_no_actor_at_all_is_an_error() -> None:
    rt = Runtime("retired-names-test")
    _Channel.got = []
    name = names.channel(1)
    try:
        rt.spawn(_Channel, name)
        rt.deliver(name, NetSendFailed(7, "connection closed"), names.NET)
        assert _Channel.got == [(name, NetSendFailed(7, "connection closed"))]
        seq = rt.seq

        rt.unregister(name)
        rt.deliver(name, NetSendFailed(8, "connection closed on request (NetClose)"), names.NET)
        assert _Channel.got == [(name, NetSendFailed(7, "connection closed"))]
        assert rt.seq == seq  # not recorded: a replay never sees it either

        with pytest.raises(KeyError, match="no actor named 'channel-2'"):
            rt.deliver(names.channel(2), NetSendFailed(1, "x"), names.NET)

        rt.spawn(_Channel, name)  # the broker registered again: a new channel under the same name
        rt.deliver(name, NetSendFailed(1, "cannot connect"), names.NET)
        assert _Channel.got[-1] == (name, NetSendFailed(1, "cannot connect"))
    finally:
        rt.shutdown()
