"""Kafka's APIs as this broker serves them: one module per API family, each registering its ``ApiSpec``
(core/api/registry.py) at import. Importing this package registers them all; add one line per new module.
"""
# ruff: noqa: F401, I001 - one import per line, so that each API family's line is its own one-line change

from core.api import api_versions
from core.api import metadata
from core.api import find_coordinator
from core.api import group
from core.api import offsets
from core.api import leader_and_isr
from core.api import update_metadata
from core.api import stop_replica
from core.api import controlled_shutdown
from core.api import offset_for_leader_epoch
from core.api import kactor_private
from core.api import fetch
from core.api import list_offsets
from core.api import produce
from core.api import admin
from core.api import init_producer_id
from core.api import sasl
from core.api import acls
from core.api import delegation_tokens
from core.api import txn_offset_commit
from core.api import write_txn_markers
from core.api import add_partitions_to_txn
from core.api import add_offsets_to_txn
from core.api import end_txn
from core.api import delete_records
from core.api import alter_replica_log_dirs
from core.api import describe_log_dirs
from core.api import offset_delete
from core.api import client_quotas
from core.api import describe_producers
from core.api import describe_transactions
from core.api import list_transactions
