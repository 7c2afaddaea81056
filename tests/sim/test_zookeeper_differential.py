"""sim.zookeeper against the real ZooKeeper server: the same random request sequences give the same results and watch
events (issue #28). The suite runs 300 sequences; `python -m sim.zk_differential --sequences 1000` runs more (see
docs/simulation.md)."""

from __future__ import annotations

import pytest

import sim.zookeeper
from sim import zk_differential

SUITE_SEQUENCES = 300


def test_the_model_answers_as_zookeeper_does(zk_chroot: str) -> None:
    agreed, report = zk_differential.run(zk_chroot, SUITE_SEQUENCES, first_seed=0, jobs=4, say=lambda _: None)
    assert report is None, report
    assert agreed == SUITE_SEQUENCES


@pytest.mark.parametrize("defect", ["suffix from cversion", "parent event first", "ephemerals in creation order"])
def test_the_differential_test_finds_a_wrong_model(zk_chroot: str, defect: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Plausible mistakes about ZooKeeper, each put into the model: the comparison with the server catches them."""
    model = sim.zookeeper.ZooKeeperModel
    if defect == "suffix from cversion":
        create = model._create

        def _create(self, sid, op, zxid, fired):  # type: ignore[no-untyped-def]
            parent = self.nodes.get(sim.zookeeper.paths.parent(op.path))
            if parent is not None:
                parent.creations = parent.cversion
            return create(self, sid, op, zxid, fired)
        monkeypatch.setattr(model, "_create", _create)
    elif defect == "parent event first":
        deliver = model._deliver
        monkeypatch.setattr(model, "_deliver", lambda self, fired: deliver(self, list(reversed(fired))))
    else:
        monkeypatch.setattr(sim.zookeeper, "java_hash_set_order", lambda items, capacity: list(items))
    agreed, report = zk_differential.run(zk_chroot, 100, first_seed=0, jobs=4, say=lambda _: None)
    assert report is not None and agreed < 100
    assert "the model and ZooKeeper disagree" in report and "!!" in report
