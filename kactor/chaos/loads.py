"""`kactor chaos`'s invariant that coordinators load completely (issue #39), as the brokers' logs show it (pure: the
runner hands each broker's log lines).

A load of a ``__transaction_state`` or ``__consumer_offsets`` partition that fails is logged at ERROR with its
partition and offset (core/coordinator/transaction/transaction_state_manager.py, core/coordinator/group/
group_metadata_manager.py: "Error loading transactions from P at offset O ...: REASON. Nothing of the partition is
loaded ..."): the partition stays loading until its next election. A failure to read the log ("reading failed: ...",
"reading the log start offset failed: ...") follows from a fault the run injects (a log dir made unusable, a leader
moving while it was read); any other reason is a batch the loader could not pass — a marker in ``__transaction_state``,
a record that does not decode — which no client or fault may put there: a violation. (`kactor sim` checks more: each
load's cache against a full read of its log, sim/coordinator_loads.py.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kactor.chaos.history import Violation

FAILED_LOAD = re.compile(r"Error loading (?:transactions|offsets) from (\S+) at offset (-?\d+)[^:]*: (.*?)\. "
                         r"Nothing of the partition is loaded")


def failed_loads(broker: int, lines: Iterable[str]) -> list[Violation]:
    """The loads of one broker's log that failed at a batch they could not pass, a violation each."""
    out = []
    for line in lines:
        m = FAILED_LOAD.search(line)
        if m is not None and not m.group(3).startswith("reading"):
            out.append(Violation("load", f"broker {broker}'s load of {m.group(1)} failed at offset {m.group(2)}: "
                                         f"{m.group(3)[:200]}"))
    return out
