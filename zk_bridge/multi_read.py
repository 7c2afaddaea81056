"""ZooKeeper's multiRead (3.6+, OpCode 22) for kazoo, which does not implement it: many getData requests in one
request and one response.

kazoo pipelines single reads, but pays its per-request cost for each ("kazoo reads/s" in `kactor bench zk-bridge`),
while the controller reads a state znode per partition on failover, on a broker's failure and in
a controlled shutdown. One multiRead of a few hundred paths costs the server and the client little more than one
read. Unlike a write multi it is not a transaction: each path gets its own result (data and stat, or an error), and
one missing node fails nothing else.

Wire format (ZooKeeper's MultiOperationRecord / MultiResponse, as kazoo's Transaction writes them): for each op a
MultiHeader(type=getData, done=false, err=-1) and a GetDataRequest(path, watch=false), closed by MultiHeader(-1, true,
-1); the answer has, per op, MultiHeader(getData, false, 0) and a GetDataResponse(data, stat), or MultiHeader(error,
false, code) and an ErrorResponse(code); then the closing header.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from kazoo.client import _prefix_root  # kazoo's own chroot rule, as its get() applies it
from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.serialization import GetData, MultiHeader, int_struct, multiheader_struct, read_buffer, stat_struct
from kazoo.protocol.states import ZnodeStat

MULTI_READ_OPCODE = 22
_GET_DATA = GetData.type
_ERROR = -1


class MultiRead(namedtuple("MultiRead", "paths")):
    """A kazoo request: getData of every path (already chrooted), no watches."""

    type = MULTI_READ_OPCODE

    def serialize(self) -> bytearray:
        b = bytearray()
        for path in self.paths:
            b.extend(MultiHeader(_GET_DATA, False, -1).serialize())
            b.extend(GetData(path, None).serialize())
        return b + multiheader_struct.pack(-1, True, -1)

    @classmethod
    def deserialize(cls, data: bytes, offset: int) -> list[Any]:
        """One entry per path: (bytes | None, ZnodeStat), or a kazoo exception instance (e.g. NoNodeError())."""
        results: list[Any] = []
        while True:
            header, offset = MultiHeader.deserialize(data, offset)
            if header.done:
                return results
            if header.type == _GET_DATA:
                value, offset = read_buffer(data, offset)
                stat = ZnodeStat._make(stat_struct.unpack_from(data, offset))
                offset += stat_struct.size
                results.append((value, stat))
            elif header.type == _ERROR:
                (err,) = int_struct.unpack_from(data, offset)
                offset += int_struct.size
                results.append(EXCEPTIONS[err]())
            else:
                raise ValueError(f"multiRead: unexpected result type {header.type}")


def multi_read_async(client: Any, paths: list[str] | tuple[str, ...]) -> Any:
    """Send one multiRead for ``paths`` (relative to the client's chroot); an IAsyncResult of `MultiRead` results.
    A server older than 3.6 fails the request as a whole (UnimplementedError)."""
    request = MultiRead(tuple(_prefix_root(client.chroot, p) for p in paths))
    async_result = client.handler.async_result()
    client._call(request, async_result)  # noqa: SLF001 - kazoo's own way to send a request object
    return async_result
