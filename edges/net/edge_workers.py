"""The edge handlers' threads of the inbound dispatch (edges/net/inbound.py): an API routed "edge:<name>" (plugged
in by the composition root, e.g. the admin server) is served on a thread of its own, its requests in order, each
answer handed back to the dispatch as any actor's answer is."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from core.api import api_versions as api_versions_api
from core.api.registry import RequestContext
from edges.net.queue_worker import QueueWorker
from messages.common import Errors

log = logging.getLogger("kactor.edges.transport")

# An edge handler: (the request's context, the internal request) -> the internal response.
EdgeHandler = Callable[[RequestContext, Any], Any]


class Replies(Protocol):
    """Where an edge handler's answers go (Inbound)."""

    name: str

    def reply(self, connection_id: int, request_id: int, body: Any) -> None: ...

    def reply_error(self, connection_id: int, request_id: int, error: int) -> None: ...


class EdgeWorker:
    """One edge handler's thread (a `QueueWorker`): requests in order, each answer handed back through
    ``Inbound.reply``; a handler that raises is answered UNKNOWN_SERVER_ERROR."""

    __slots__ = ("_inbound", "_handler", "_worker")

    def __init__(self, inbound: Replies, name: str, handler: EdgeHandler) -> None:
        self._inbound = inbound
        self._handler = handler
        self._worker: QueueWorker[tuple[int, int | None, RequestContext, Any]] = QueueWorker(
            f"{inbound.name}-{name}", self._serve)

    def submit(self, conn_id: int, rid: int | None, ctx: RequestContext, request: Any) -> None:
        """Handle ``request``; its answer goes back as the reply to ``rid``, or nowhere when ``rid`` is None."""
        self._worker.submit((conn_id, rid, ctx, request))

    def close(self) -> None:
        self._worker.close()

    def _serve(self, job: tuple[int, int | None, RequestContext, Any]) -> None:
        conn_id, rid, ctx, request = job
        try:
            response = self._handler(ctx, request)
        except Exception:  # noqa: BLE001 - one failed request must not stop the handler
            log.exception("edge handler failed on %s", type(request).__name__)
            if rid is not None:
                self._inbound.reply_error(conn_id, rid, int(Errors.UNKNOWN_SERVER_ERROR))
            return
        if rid is not None:
            self._inbound.reply(conn_id, rid, response)


def _api_versions(ctx: RequestContext, request: Any) -> Any:
    return api_versions_api.handle_api_versions_request(request, ctx.api_version)


class EdgeHandlers:
    """The edge handlers of one process's dispatch: ``inline`` ones answered on the I/O thread (ApiVersions: it needs
    no state — the served keys), the others each on a thread of its own (``workers``)."""

    __slots__ = ("_replies", "workers", "inline")

    def __init__(self, replies: Replies) -> None:
        self._replies = replies
        self.workers: dict[str, EdgeWorker] = {}
        self.inline: dict[str, EdgeHandler] = {"api_versions": _api_versions}

    def add(self, name: str, handler: EdgeHandler) -> None:
        if name in self.workers or name in self.inline:
            raise ValueError(f"edge handler {name!r} is already set")
        self.workers[name] = EdgeWorker(self._replies, name, handler)

    def run_task(self, conn_id: int, ctx: RequestContext, spec_name: str, handler: str, request: Any) -> None:
        """The work an answer asks of an edge after it is sent (the spec's ``edge_task``), unanswered."""
        worker = self.workers.get(handler)
        if worker is None:
            log.error("%s: no edge handler %r for the work a %s answer asks for", self._replies.name, handler,
                      spec_name)
            return
        worker.submit(conn_id, None, ctx, request)

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
