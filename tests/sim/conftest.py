"""The sim tests' shared fixtures: the brokers' logs kept to errors (the faults make the actors log connection
failures; the tests assert on what the run reports, and an error an actor logs with its exception is still seen by
sim/run.py's ActorErrors), and a started 3-broker cluster of seed 1 with its topic."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from kactor.sim_boot import SimBoot
from sim.run import Cluster, start_cluster


@pytest.fixture(autouse=True)
def _quiet() -> None:
    logging.getLogger("kactor").setLevel(logging.ERROR)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """Seed 1's cluster, started and its topic led (test modules needing another seed define their own)."""
    c = start_cluster(1, SimBoot())
    try:
        yield c
    finally:
        c.close()
