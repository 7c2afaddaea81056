"""kazoo clients of the tests that run on a real ZooKeeper: one started and always closed, and a fresh chroot."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from kazoo.client import KazooClient

# The largest session the tests' tickTime=200 allows: generous, so a busy 2-core CI box does not drop sessions by
# accident.
TEST_SESSION_TIMEOUT_S = 4.0


@contextlib.contextmanager
def kazoo_client(hosts: str, timeout: float = TEST_SESSION_TIMEOUT_S, **kwargs: Any) -> Iterator[KazooClient]:
    """A started KazooClient on ``hosts`` (a connect string, chroot allowed), stopped and closed on exit."""
    client = KazooClient(hosts=hosts, timeout=timeout, **kwargs)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def new_chroot(connect_string: str, prefix: str = "t") -> str:
    """Create ``/<prefix>-<uuid>`` on the server; returns the connect string with it as chroot."""
    chroot = f"/{prefix}-{uuid.uuid4().hex}"
    with kazoo_client(connect_string) as root:
        root.ensure_path(chroot)
    return connect_string + chroot
