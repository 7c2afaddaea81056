"""The trace writer's bytes file (trace version 4): every input's long bytes, at the offset its line names, whatever
the sizes (values spanning the writer's aligned buffers, flushes in between), on the temporary folder's file system
and on tmpfs (which kernels before 6.6 refuse O_DIRECT on: the same writes then go through the page cache)."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from edges.trace_writer import TraceWriter, _BytesFile
from kactor.trace.reader import decode_body, read_records
from messages.codec import rawbytes
from messages.codec.rawbytes import FILE_MIN
from messages.common import TopicPartition
from messages.net import NetRequest
from messages.replication import ProducePartition, ProduceRequest

_SIZES = [FILE_MIN + 1, 4096, 1, 3 * 4096 + 7, _BytesFile.SIZE - 100, 200, _BytesFile.SIZE + 5, 2 * _BytesFile.SIZE,
          FILE_MIN, 65, 64, 5000]


@pytest.mark.parametrize("where", ["tmp", "shm"])
def test_the_bytes_file_holds_every_inputs_bytes_where_its_line_says(tmp_path: Path, where: str) -> None:
    if where == "shm" and not (os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)):
        pytest.skip("no /dev/shm")
    base = tmp_path if where == "tmp" else Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        rng = random.Random(4)
        path = base / "broker-0.jsonl"
        writer = TraceWriter(str(path), {"process": "broker-0"}, flush_interval_s=3600)  # flushes are the test's
        sent = []
        for i, size in enumerate(_SIZES):
            batch = rng.randbytes(size)
            body = NetRequest(1, i, ProduceRequest(-1, 1000, (ProducePartition(TopicPartition("t", 0), batch),)),
                              True)
            writer.append(i + 1, 1000.0 + i, "edge:net", "replica-manager", body, None)
            sent.append(body)
            if i % 3 == 1:
                writer.flush()  # the buffer in progress written, padded, then written again as it fills
        writer.close()
        long = [b.body.partitions[0].records for b in sent if len(b.body.partitions[0].records) > FILE_MIN]
        assert (base / "broker-0.bin").read_bytes() == b"".join(long)  # cut to its length: no padding left
        lines = path.read_text().splitlines()[1:]
        assert sum(rawbytes.TAG in line for line in lines) == len(long)
        assert [decode_body(str(path), r) for r in read_records(str(path))] == sent
    finally:
        if where == "shm":
            shutil.rmtree(base, ignore_errors=True)


def test_a_file_system_refusing_o_direct_writes_gets_the_same_bytes_through_the_page_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    import edges.trace_writer as writer_module

    real = os.pwrite
    direct = getattr(os, "O_DIRECT", 0)

    def refusing(fd: int, data: object, at: int) -> int:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & direct:
            raise OSError(22, "Invalid argument")  # EINVAL, as such a file system answers
        return real(fd, data, at)  # type: ignore[arg-type]

    monkeypatch.setattr(writer_module.os, "pwrite", refusing)
    f = _BytesFile(str(tmp_path / "b.bin"))
    data = random.Random(1).randbytes(_BytesFile.SIZE + 999)
    assert f.put(data[:10]) == 0 and f.put(data[10:]) == 10
    f.close()
    assert (tmp_path / "b.bin").read_bytes() == data


def test_puts_from_one_thread_while_another_writes_keep_their_offsets(tmp_path: Path) -> None:
    import threading

    f = _BytesFile(str(tmp_path / "b.bin"))
    rng = random.Random(2)
    values = [rng.randbytes(rng.choice((1500, 70_000, 900_000))) for _ in range(60)]
    offsets: list[int] = []
    done = threading.Event()

    def writer() -> None:
        while not done.is_set():
            f.write_all()  # the flusher's flush, racing the puts

    t = threading.Thread(target=writer)
    t.start()
    try:
        offsets = [f.put(v) for v in values]
    finally:
        done.set()
        t.join()
    f.close()
    content = (tmp_path / "b.bin").read_bytes()
    assert len(content) == sum(map(len, values))
    assert all(content[o:o + len(v)] == v for o, v in zip(offsets, values, strict=True))


def test_no_bytes_file_until_bytes_go_to_it_and_none_left_from_an_earlier_trace(tmp_path: Path) -> None:
    """A trace whose inputs carry no more than FILE_MIN bytes has no bytes file beside it; a bytes file left by an
    earlier trace of the same name goes when the writer starts (its .jsonl is overwritten); the first long bytes
    create it."""
    path = tmp_path / "broker-0.jsonl"
    (tmp_path / "broker-0.bin").write_bytes(b"an earlier trace's bytes")
    writer = TraceWriter(str(path), {"process": "broker-0"}, flush_interval_s=3600)
    assert not (tmp_path / "broker-0.bin").exists()
    small = NetRequest(1, 1, ProduceRequest(-1, 1000, (ProducePartition(TopicPartition("t", 0), b"x" * FILE_MIN),)),
                       True)
    writer.append(1, 1000.0, "edge:net", "replica-manager", small, None)
    writer.flush()
    assert not (tmp_path / "broker-0.bin").exists()
    big = NetRequest(1, 2, ProduceRequest(-1, 1000, (ProducePartition(TopicPartition("t", 0),
                                                                      b"y" * (FILE_MIN + 1)),)), True)
    writer.append(2, 1001.0, "edge:net", "replica-manager", big, None)
    writer.close()
    assert (tmp_path / "broker-0.bin").read_bytes() == b"y" * (FILE_MIN + 1)
    assert [decode_body(str(path), r) for r in read_records(str(path))] == [small, big]
