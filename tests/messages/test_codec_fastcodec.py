"""messages.codec's front and its pure-Python text encoder (fastcodec) encode and decode exactly as the reference
codec does, on every record of a real trace; noted wire texts are written as they arrived."""

from __future__ import annotations

import json

import messages.codec
from kactor.trace.reader import ensure_registered
from messages.codec import encode_record, fastcodec
from messages.codec import reference as codec


def test_fastcodec_matches_the_codec_on_a_recorded_trace(recorded_trace: str) -> None:
    ensure_registered()
    with open(recorded_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    assert len(lines) > 100
    for line in lines:
        d = json.loads(line)
        body = codec.from_json(d["payload"])
        assert messages.codec.from_json(d["payload"]) == body
        assert fastcodec.to_json(body) == codec.to_json(body) == d["payload"]
        assert messages.codec.dumps(body) == codec.dumps(body)
        # the writer's line is byte for byte the recorded one
        assert encode_record(d["seq"], d["ts"], d["sender"], d["receiver"], body, d["cause"]) == line


def test_fastcodec_edge_values() -> None:
    import enum

    from messages.common import TopicPartition

    class Colour(enum.IntEnum):
        RED = 1

    values = [None, True, 1, 1.5, "x", (1, "a"), [TopicPartition("t", 0)], {TopicPartition("t", 1): (1, 2)},
              frozenset({TopicPartition("b", 0), TopicPartition("a", 1)}), b"\x00\xff", Colour.RED]
    values += [-0.0, float("nan"), float("inf"), 10**30, "é\n\"", (), [], {}, frozenset(), Colour.RED, True, False,
               (TopicPartition("t", 0),) * 3]
    for v in values:
        assert fastcodec.encode_json(fastcodec.to_json(v)) == fastcodec.encode_json(codec.to_json(v)), v  # nan ≠ nan
        assert fastcodec.to_text(v) == fastcodec.encode_json(codec.to_json(v)), v


def test_encode_records_reuses_shared_values_exactly() -> None:
    """A value shared by several records (the very same object) is written identically each time, and a batch
    equals its records encoded one by one."""
    from messages.common import TopicPartition

    shared = (TopicPartition("t", 0), TopicPartition("t", 1))
    records = [(i, 1767225600000.5 + i, "a", "b", shared if i % 2 else TopicPartition("u", i), i - 1 or None)
               for i in range(1, 6)]
    text = fastcodec.encode_records(records)
    assert text == "".join(encode_record(*r) + "\n" for r in records)
    assert text.splitlines()[0] == ('{"seq":1,"ts":1767225600001.5,"sender":"a","receiver":"b","type":"tuple",'
                                    '"payload":[{"@":"TopicPartition","topic":"t","partition":0},'
                                    '{"@":"TopicPartition","topic":"t","partition":1}],"cause":null}')
    assert fastcodec.encode_record(1, 5, "a", "b", TopicPartition("t", 0), 2).startswith('{"seq":1,"ts":5,')


def test_writer_writes_noted_wire_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A value an edge decoded from JSON text is written as that text (messages.codec.note_text) while a trace writer
    is open, once; the note is forgotten after the writer's flush, and none is kept with no writer open."""
    from edges.trace_writer import TraceWriter
    from messages.codec import note_text, noting_texts, orjson_lines
    from messages.zk import ZkOpResult

    tp = ZkOpResult("ok")  # not a class kept by value (a kept value's text may serve first: the same text, canonical)
    wire = '{"@": "ZkOpResult", "code": "ok"}'  # spaced: tells the noted text from an encoding
    assert not noting_texts()
    note_text(tp, wire)  # no writer: nothing kept
    assert id(tp) not in orjson_lines._known
    w = TraceWriter(str(tmp_path / "p.jsonl"), {"process": "p"}, flush_interval_s=3600)
    assert noting_texts()
    note_text(tp, wire)
    w.append(1, 1.0, "edge:net", "a", (tp, tp), None)
    w.flush()
    note_text(tp, '"not used: the record is already written"')
    w.flush()  # nothing buffered: the note goes
    w.append(2, 2.0, "edge:net", "a", tp, 1)
    note_text(tp, '"not used: the writer is closed"')
    w.close()
    assert not noting_texts() and id(tp) not in orjson_lines._known
    lines = (tmp_path / "p.jsonl").read_text().splitlines()[1:]
    tp_text = '{"@":"ZkOpResult","code":"ok","data":null,"stat":null,"children":null,"path":null,"results":null}'
    assert lines == [f'{{"seq":1,"ts":1.0,"sender":"edge:net","receiver":"a","type":"tuple","payload":[{wire},'
                     f'{wire}],"cause":null}}',
                     f'{{"seq":2,"ts":2.0,"sender":"edge:net","receiver":"a","type":"ZkOpResult",'
                     f'"payload":{tp_text},"cause":1}}']
