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
