"""`kactor sim --seeds 46 --steps 50 --txn-check` (issue #40): broker 1 loses power and restarts with the
clean-shutdown marker of its previous restart back, a torn ``.log`` and a ``.txnindex`` holding an ABORT marker the
log lost; its log recovery now rebuilds the transaction index (LogSegment.recover, 2.6.3's), so re-fetching that
marker from the leader no longer fails the partition ("The last offset of appended transactions must increase
sequentially, but 44 is not greater than current last offset 44"). The unit tests are
tests/core/broker/test_log_recovery_txnindex.py."""

from __future__ import annotations

from kactor.sim_boot import SimBoot
from sim.run import run_seed


def test_seed_46_power_loss_leaves_no_stale_txnindex_entry() -> None:
    r = run_seed(46, 50, SimBoot(), txn_check=True)
    assert not [v for v in r.violations if "must increase sequentially" in v or "raised" in v], r.violations
    assert r.violations == () and r.txn_report == ""
