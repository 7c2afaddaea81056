"""The one queue thread under the edge handlers and the SASL token evaluation: jobs in order, a failing job logged
and the next served, a None job served like any other, close after what was submitted."""

from __future__ import annotations

import logging

import pytest

from edges.net.queue_worker import QueueWorker


def test_jobs_are_served_in_order_and_a_failure_does_not_stop_the_thread(caplog: pytest.LogCaptureFixture) -> None:
    served: list[int | None] = []

    def serve(job: int | None) -> None:
        if job == 3:
            raise ValueError("bad job")
        served.append(job)

    worker: QueueWorker[int | None] = QueueWorker("test-worker", serve)
    with caplog.at_level(logging.ERROR, logger="kactor.edges.transport"):
        for job in (1, 2, 3, None, 4):
            worker.submit(job)
        worker.close(wait=10)
    assert served == [1, 2, None, 4]
    assert [r.getMessage() for r in caplog.records] == ["test-worker failed on a job"]
    assert caplog.records[0].exc_info is not None and caplog.records[0].exc_info[0] is ValueError
