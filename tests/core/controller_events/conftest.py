"""Make tests/core/controller (fake_zk.py, the in-memory ZooKeeper model) importable from these tests."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (_HERE, os.path.join(os.path.dirname(_HERE), "controller")):
    if _p not in sys.path:
        sys.path.insert(0, _p)
