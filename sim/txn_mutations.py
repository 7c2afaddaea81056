"""Transaction defects for `kactor sim --mutation NAME --txn-check` (issue #40): how the transaction checker's
power is shown end to end. Registered into sim/mutations.py's MUTATIONS when imported (kactor/cli/cmd_sim.py does),
so that file's list stays its own; each undoes what 2.6.3 does, in the code the simulator runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.mutations import MUTATIONS, Mutation, _patch


def _aborted_transactions_unlisted() -> Callable[[], None]:
    """Log.collectAbortedTransactions answers nothing: a read_committed Fetch's aborted_transactions list is empty,
    so the consumer keeps the records of aborted transactions (Fetcher drops only what the list names)."""
    from core.broker.log import Log

    def collect_aborted_transactions(self: Any, start_offset: int, upper_bound_offset: int) -> list[Any]:
        return []

    return _patch(Log, "collect_aborted_transactions", collect_aborted_transactions)


TXN_MUTATIONS = (
    Mutation("aborted-transactions-unlisted", "Log.collectAbortedTransactions",
             "a read_committed Fetch lists no aborted transactions: the consumer keeps aborted records (issue #40)",
             _aborted_transactions_unlisted),
)
for _m in TXN_MUTATIONS:
    MUTATIONS.setdefault(_m.name, _m)

__all__ = ["TXN_MUTATIONS"]
