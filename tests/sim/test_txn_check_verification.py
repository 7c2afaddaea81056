"""`kactor sim --txn-check` exercises the brokers' transaction verification (KIP-890 part 1, issue #40): the
workload's transactional Produce names its transactional.id as every ProduceRequest v3+ of a transactional producer
does, so a partition leader about to open a transaction asks the coordinator (ReplicaManager's
_transaction_coordinator, then the verify-only AddPartitionsToTxn). Without the id the leader skipped verification
and the campaign measured 2.6's hole whatever the brokers did."""

from __future__ import annotations

import pytest

from core.broker.replica_manager import ReplicaManager
from kactor.sim_boot import SimBoot
from sim.run import run_seed


def test_the_workloads_transactional_produce_is_verified_by_the_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = ReplicaManager._transaction_coordinator

    def spy(self: ReplicaManager, transactional_id: str):  # noqa: ANN202
        asked.append(transactional_id)
        return real(self, transactional_id)

    monkeypatch.setattr(ReplicaManager, "_transaction_coordinator", spy)
    r = run_seed(1, 15, SimBoot(), txn_check=True)
    assert r.violations == ()
    assert asked and {a.rsplit("-", 1)[0] for a in asked} == {"sim-tx-1"}
