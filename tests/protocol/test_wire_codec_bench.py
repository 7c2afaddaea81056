"""bench/wire_codec.py at a tiny loop time, so it does not rot: four messages, both codecs timed, equal bytes (the
bench asserts that before timing). No timing is asserted."""

from __future__ import annotations

from bench.wire_codec import measure


def test_wire_codec_bench_measures_four_messages_both_ways() -> None:
    rows = measure(runs=1, seconds=0.0001)
    assert [r[0].split(" (")[0] for r in rows] == [
        "Metadata v9 response", "Produce v8 request", "Fetch v11 response", "LeaderAndIsr v4 request",
    ]  # fmt: skip
    for _label, size, *times in rows:
        assert size > 40_000 and all(t > 0 for t in times)
