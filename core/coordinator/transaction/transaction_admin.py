"""The transaction coordinator's answers to KIP-664's admin requests (Kafka 3.0; as of 3.6), beyond Kafka 2.6:
TransactionCoordinator.handleListTransactions (TransactionStateManager.listTransactionStates) and
handleDescribeTransactions, over the coordinator's cache of transactional ids. Pure functions of the coordinator's
state; the procedures answer at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState
from core.effects import Proc, ReplyHandle, Respond
from messages.common import Errors
from messages.transaction_admin import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
    TransactionDescription,
    TransactionListing,
)

_BY_NAME = {s.kafka_name: s for s in TransactionState}


def list_transaction_states(coordinator: Any, state_filters: Iterable[str], producer_id_filters: Iterable[int]
                            ) -> ListTransactionsResponse:
    """TransactionCoordinator.handleListTransactions: COORDINATOR_NOT_AVAILABLE until the coordinator is active,
    COORDINATOR_LOAD_IN_PROGRESS while any of its partitions loads; else every cached transactional id but the Dead
    ones (being expired) that passes both filters (a state name Kafka does not know is answered back as unknown and
    filters nothing in)."""
    if not coordinator.is_active:
        return ListTransactionsResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    manager = coordinator.state_manager
    if manager.loading_partitions:
        return ListTransactionsResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    states = {_BY_NAME[n] for n in state_filters if n in _BY_NAME}
    unknown = tuple(dict.fromkeys(n for n in state_filters if n not in _BY_NAME))
    pids = set(producer_id_filters)

    def include(m: TransactionMetadata) -> bool:
        return (m.state is not TransactionState.DEAD and (not pids or m.producer_id in pids)
                and (not states or m.state in states))

    listings = tuple(TransactionListing(m.transactional_id, m.producer_id, m.state.kafka_name)
                     for _, entry in sorted(manager.transaction_metadata_cache.items())
                     for m in entry.metadata_per_transactional_id.values() if include(m))
    return ListTransactionsResponse(Errors.NONE, unknown, listings)


def describe_transaction(coordinator: Any, transactional_id: str) -> TransactionDescription:
    """TransactionCoordinator.handleDescribeTransactions for one id: its producer, state, timeout, start time and
    partitions; COORDINATOR_NOT_AVAILABLE until active, INVALID_REQUEST for an empty id, the state manager's
    NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS, TRANSACTIONAL_ID_NOT_FOUND for an unknown (or Dead) id."""
    if not coordinator.is_active:
        return TransactionDescription(transactional_id, Errors.COORDINATOR_NOT_AVAILABLE)
    if not transactional_id:
        return TransactionDescription(transactional_id, Errors.INVALID_REQUEST)
    state = coordinator.state_manager.get_transaction_state(transactional_id)
    if isinstance(state, Errors):
        return TransactionDescription(transactional_id, state)
    if state is None or state.transaction_metadata.state is TransactionState.DEAD:
        return TransactionDescription(transactional_id, Errors.TRANSACTIONAL_ID_NOT_FOUND)
    m = state.transaction_metadata
    return TransactionDescription(transactional_id, Errors.NONE, m.state.kafka_name, m.txn_timeout_ms,
                                  m.txn_start_timestamp, m.producer_id, m.producer_epoch,
                                  tuple(sorted(m.topic_partitions)))


def handle_list_transactions(coordinator: Any, request: ListTransactionsRequest, reply_to: ReplyHandle
                             ) -> Proc[None]:
    yield Respond(reply_to, list_transaction_states(coordinator, request.state_filters, request.producer_id_filters))


def handle_describe_transactions(coordinator: Any, request: DescribeTransactionsRequest, reply_to: ReplyHandle
                                 ) -> Proc[None]:
    yield Respond(reply_to, DescribeTransactionsResponse(tuple(describe_transaction(coordinator, t)
                                                               for t in request.transactional_ids)))
