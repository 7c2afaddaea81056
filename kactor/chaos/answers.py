"""UNKNOWN_SERVER_ERROR (-1) answers of a chaos run, as its clients received them and as the brokers' logs record
them (pure: the runner reads the files and the client's record).

A broker answers -1 where something failed that it did not foresee, and logs it: the transport when a request
reaches no actor or no edge handler, or an edge handler raised (edges/transport.py); a partition shard or the
group coordinator when a request's procedure raised (actors/partition_actor.py, actors/group_coordinator_actor.py).
The client side sees every -1 answer to the records it sent (their delivery reports) and to its consumer, and
librdkafka's error callback reports the -1 that made the idempotent producer fail for good. One answer can be
counted on both sides; 0 is expected on each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kactor.chaos.history import ErrorAnswer

UNKNOWN_SERVER_ERROR = -1

# The brokers' log lines of an answer with -1 (their wording is the code's named above)
BROKER_LOG_PATTERNS = (
    re.compile(r"no actor '[^']*' for \w+"),
    re.compile(r"no edge handler '[^']*' for \w+"),
    re.compile(r"edge handler failed on \w+"),
    re.compile(r"\S+: \w+Request failed: .*"),  # a partition shard's procedure (answered with error_response)
    re.compile(r"group coordinator procedure failed: .*"),
)
DETAIL_MAX = 200


def broker_log_answers(broker: int, lines: Iterable[str]) -> list[ErrorAnswer]:
    """The -1 answers one broker's log records, a line each."""
    out = []
    for line in lines:
        for pattern in BROKER_LOG_PATTERNS:
            m = pattern.search(line)
            if m is not None:
                out.append(ErrorAnswer(None, f"broker {broker}'s log", m.group(0)[:DETAIL_MAX]))
                break
    return out
