"""bench/ceiling.py at a tiny size: every frame reaches the leader's and both followers' files, whole."""

from __future__ import annotations

from bench.ceiling import batch_payload, run_ceiling
from protocol.records import check_batch, iter_batches


def test_ceiling_appends_every_frame_on_the_leader_and_both_followers() -> None:
    value = bytes(range(256)) * 4
    run = run_ceiling(records=2_000, batch_records=100, rf=3, value=value)
    assert run.records == 2_000 and run.bytes == 2_000 * 1024
    payload = len(batch_payload(100, value))
    assert run.frame_bytes == 4 + payload
    assert run.appended == {"leader": 20 * payload, "follower 1": 20 * payload, "follower 2": 20 * payload}
    assert set(run.cpu) == {"client", "leader", "follower 1", "follower 2", "others"}
    assert run.seconds > 0 and run.mb_per_s > 0


def test_ceiling_rf1_has_no_followers() -> None:
    run = run_ceiling(records=250, batch_records=100, rf=1)
    assert run.records == 300  # whole frames: 3 of 100
    assert set(run.appended) == {"leader"} and set(run.cpu) == {"client", "leader", "others"}


def test_ceiling_frames_are_real_record_batches() -> None:
    value = b"v" * 1024
    payload = batch_payload(7, value)
    (batch,) = iter_batches(payload)
    check_batch(batch)
    assert batch.records_count == 7 and [r.value for r in batch.records()] == [value] * 7
