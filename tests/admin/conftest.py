"""Fixtures for the admin CLI tests: ``kactor`` (the CLI on this test's chroot) and ``brokers`` (1, 2, 3 registered)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from admin_helpers import register_broker, run_cli_in_process
from kazoo.client import KazooClient


@pytest.fixture
def kactor(zk_chroot: str) -> Callable[..., subprocess.CompletedProcess[str]]:
    """kactor(SUBCOMMAND, *options): runs ``kactor SUBCOMMAND --zookeeper <this test's chroot> *options`` (in this
    process: admin_helpers.run_cli_in_process; a command that hangs is ended by pytest-timeout, as it has no
    subprocess to time out)."""
    def run(subcommand: str, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli_in_process(subcommand, "--zookeeper", zk_chroot, *args)
    return run


@pytest.fixture
def brokers(zk: KazooClient) -> list[int]:
    """Brokers 1, 2 and 3 registered (ephemeral, on the test's kazoo session)."""
    for b in (1, 2, 3):
        register_broker(zk, b)
    return [1, 2, 3]
