"""edges.gc_policy: a live broker's full collections walk only objects they have not seen survive before."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from edges import gc_policy


class _Node:
    """A tracked container (instances take part in cycle collection)."""

    def __init__(self) -> None:
        self.peer: _Node | None = None


def _tracked(obj: object) -> bool:
    """Whether ``obj`` is in a collectable generation (frozen objects are in none of them)."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def policy() -> Iterator[None]:
    gc_policy.uninstall()
    try:
        yield
    finally:
        gc_policy.uninstall()


def test_install_freezes_what_is_alive(policy: None) -> None:
    before = _Node()
    assert _tracked(before)
    assert gc_policy.install()
    assert gc.get_freeze_count() > 0
    assert not _tracked(before)


def test_survivors_of_a_full_collection_are_frozen(policy: None) -> None:
    gc_policy.install()
    survivor = _Node()
    assert _tracked(survivor)
    gc.collect()  # a full collection: its survivors are not walked again
    assert not _tracked(survivor)


def test_young_collections_do_not_freeze(policy: None) -> None:
    gc_policy.install()
    young = _Node()
    gc.collect(0)
    gc.collect(1)
    assert _tracked(young)


def test_garbage_cycles_are_still_collected_before_they_are_frozen(policy: None) -> None:
    gc_policy.install()
    a, b = _Node(), _Node()
    a.peer, b.peer = b, a
    del a, b
    assert gc.collect() >= 2


def test_install_is_idempotent_and_uninstall_restores_the_default(policy: None) -> None:
    assert gc_policy.install()
    assert not gc_policy.install()
    assert gc_policy.installed()
    assert sum(cb is gc_policy._freeze_survivors for cb in gc.callbacks) == 1
    gc_policy.uninstall()
    assert not gc_policy.installed()
    assert gc.get_freeze_count() == 0
    assert gc_policy._freeze_survivors not in gc.callbacks
    later = _Node()
    gc.collect()
    assert _tracked(later)


def test_without_the_policy_survivors_stay_tracked(policy: None) -> None:
    survivor = _Node()
    gc.collect()
    assert _tracked(survivor)
