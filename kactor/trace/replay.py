"""Replay one broker process's trace in simpleSystemBase's delivery order and check it reproduces every message exactly.

The actors of a broker process are rebuilt (same classes, same names, same spawn order) with no edges. Every
external input the trace recorded (ZooKeeper responses and watches, network requests and responses, timer firings,
the process's own start-up inputs) is delivered in the recorded order with the clock set to its recorded time; the
actors' own messages are not fed, they are produced, and with ``check`` each is compared with the recorded one.

Speed: the actors are delivered by `kactor.trace.inline_system` (simpleSystemBase's order without its per-message
machinery); only the external inputs are parsed and decoded. A produced message is encoded with the trace writer's
own `encode_record_bytes` and compared, byte for byte, with the recorded line; only when the two lines differ are
both parsed to name the first differing field. Scratch log dirs live on tmpfs when there is one, so the replica
manager's checkpoint fsyncs cost nothing.
"""

from __future__ import annotations

import functools
import gc
import itertools
import json
import logging
import operator
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

import attrs
import orjson

from actors.clock import ManualClock
from actors.edge_slots import Edges
from actors.runtime import Runtime
from edges.log_dirs import RecordedLogDirs
from kactor.trace.inline_system import InlineActorSystem
from kactor.trace.reader import (
    Record,
    TraceError,
    bytes_file,
    decode_body,
    ensure_registered,
    read_header,
    read_records,
)
from messages.broker_lifecycle import ReplicaManagerInit
from messages.codec import CodecError, encode_record_bytes, from_json, note_text
from messages.codec.rawbytes import TAG as BYTES_FILE_TAG
from messages.codec.summary import EXTERNAL_SENDERS
from messages.net import NetRequest
from messages.replication import AlterReplicaLogDirsRequest

log = logging.getLogger("kactor.trace")

# The writer's fixed key order (docs/trace-format.md) lets a replay read seq and sender without parsing the line.
# The sender's string is matched as runs of plain characters between escapes (the unrolled form: half the time of an
# alternation tried per character).
# The same prefix with one group: the sender's start when it makes the line an external input (reader.is_external
# on the line's bytes: b"edge:" or b"cli"), else b"". Matched line by line (a match reads only the prefix).
_PREFIX_INPUT = re.compile(rb'\{"seq":\d+,"ts":[^,]+,"sender":"('
                           + b"|".join(re.escape(p.encode()) for p in EXTERNAL_SENDERS)
                           + rb'|)[^"\\]*(?:\\.[^"\\]*)*"')
_GROUP_1 = operator.methodcaller("group", 1)
# The same, over every line's first _HEAD_BYTES bytes at once, each after a newline (`_input_flags`): one findall
# call gives each line's group, without a call and a match object per line. A newline and `{"seq":` can only meet at
# a line's start (a line holds no newline but its last byte, which the joining one follows).
_HEAD_BYTES = 112
_HEAD = operator.itemgetter(slice(0, _HEAD_BYTES))
_PREFIX_INPUT_HEADS = re.compile(rb'\n\{"seq":\d+,"ts":[^,\n]+,"sender":"('
                                 + b"|".join(re.escape(p.encode()) for p in EXTERNAL_SENDERS)
                                 + rb'|)[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_BYTES_FILE_REF = f'"{BYTES_FILE_TAG}"'.encode()  # an input line naming its trace's bytes file
_FIELDS = ("seq", "sender", "receiver", "type", "cause", "ts", "payload")
_GC_YOUNG = 10_000  # the young generation's threshold during a replay (the default is 700 allocations)


@attrs.frozen
class Divergence:
    seq: int
    field: str
    expected: dict[str, Any] | None
    actual: dict[str, Any] | None


@attrs.define
class ReplayResult:
    path: str
    compared: int = 0
    delivered: int = 0
    divergence: Divergence | None = None
    wall_s: float = 0.0
    recorded_span_ms: float = 0.0
    runtime: Runtime | None = None
    code_changed: bool = False

    @property
    def identical(self) -> bool:
        return self.divergence is None


def _scratch_dir() -> str:
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="kactor-replay-", dir=base)


_NAMING_PATHS = frozenset((ReplicaManagerInit, NetRequest))  # the inputs that may name a log dir


def _rewrite_input(body: Any, scratch: str, paths: dict[bytes, bytes], dirs_seen: dict[str, str]) -> Any:
    """External inputs that name local paths are pointed at a scratch folder, so a replay never touches the
    recorded broker's log dirs; ``paths`` learns scratch → recorded, to map them back before comparing, and
    ``dirs_seen`` recorded → scratch, for the requests that name a log dir (AlterReplicaLogDirs)."""
    if body.__class__ is ReplicaManagerInit:
        dirs = tuple(f"{scratch}/log-dir-{i}" for i in range(len(body.log_dirs)))
        # JSON-escaped forms too: the comparison runs on encoded lines
        paths.update({json.dumps(d)[1:-1].encode(): json.dumps(o)[1:-1].encode()
                      for d, o in zip(dirs, body.log_dirs, strict=True)})
        for d, o in zip(dirs, body.log_dirs, strict=True):
            dirs_seen[o] = dirs_seen[os.path.abspath(o)] = d
        return attrs.evolve(body, log_dirs=dirs)
    if body.__class__ is NetRequest and body.body.__class__ is AlterReplicaLogDirsRequest:
        return attrs.evolve(body, body=attrs.evolve(body.body, dirs=tuple(
            attrs.evolve(d, log_dir=dirs_seen.get(d.log_dir, d.log_dir)) for d in body.body.dirs)))
    return body


def _apply_disk(path: str, disk: Any, dirs_seen: dict[str, str]) -> None:
    """The header's ``disk`` (docs/trace-format.md) done to the scratch dir standing for its recorded log dir."""
    from kactor.trace.disk_change import apply_disk_change

    log_dir = disk.get("log_dir") if isinstance(disk, dict) else None
    scratch = dirs_seen.get(log_dir) if isinstance(log_dir, str) else None
    if scratch is None:
        raise TraceError(f"{path}: the header's disk names log dir {log_dir!r}, which the broker does not use")
    try:
        apply_disk_change(disk, scratch)
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None


def _recorded_append_failures(path: str, texts: list[bytes], flags: list[bytes], linenos: list[int] | None
                              ) -> frozenset[tuple[int, int]]:
    """The (dir index, seq) of every append the recorded broker's file system refused (its LogAppendFailed inputs,
    recorded after the message they happened in, so read ahead): the replay refuses them again at the same point."""
    found = set()
    for i in itertools.compress(range(len(texts)), flags):
        if b"LogAppendFailed" in texts[i]:
            d = _parse(path, texts[i], i + 2 if linenos is None else linenos[i])
            if d["type"] == "LogAppendFailed":
                body = from_json(d["payload"])
                found.add((body.dir_index, body.seq))
    return frozenset(found)


def _read_lines(path: str) -> tuple[dict[str, Any], list[bytes], list[bytes], float]:
    """The header, every record line's text (bytes as in the file, newline included: a complete last line without
    one gets it), what each line's sender starts with (``b"edge:"`` or ``b"cli"`` for an external input, ``b""``
    otherwise) and the recorded span in ms (last ts − first ts)."""
    header = read_header(path)
    try:
        # bytes: orjson parses them as they are, and the check compares the encoder's bytes with them. readlines
        # finds each newline with memchr; bytes.split(b"\n") compares byte by byte (a 3 MB file: 5x the instructions)
        with open(path, "rb") as f:
            lines = f.readlines()
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror}") from None
    # every line ends with "\n" — unless the process died mid-write
    if len(lines) > 1 and not lines[-1].endswith(b"\n"):
        try:
            json.loads(lines[-1])
        except (json.JSONDecodeError, UnicodeDecodeError):
            log.warning("%s:%d: truncated last line ignored (the process stopped mid-write)", path, len(lines))
            lines.pop()
        else:
            lines[-1] += b"\n"
    texts = lines[1:]
    flags = _input_flags(path, texts)
    span = 0.0
    if texts:
        span = float(_parse(path, texts[-1], len(texts) + 1)["ts"]) - float(_parse(path, texts[0], 2)["ts"])
    return header, texts, flags, span


def _input_flags(path: str, texts: list[bytes]) -> list[bytes]:
    """Each line's _PREFIX_INPUT group, every line's prefix checked (a match reads ~60 bytes of a line; a search over
    the file reads all of it). First over the lines' heads at once: as many matches as lines is one per line, in
    order (one at most per head); fewer, a prefix longer than a head or a corrupt line, and each line is matched on
    its own (4.8 k instructions a line against 5.7 k, on a recording of the demo)."""
    flags: list[bytes] = _PREFIX_INPUT_HEADS.findall(b"\n" + b"\n".join(map(_HEAD, texts)))
    if len(flags) == len(texts):
        return flags
    matches = list(map(_PREFIX_INPUT.match, texts))
    if None in matches:
        idx = matches.index(None)
        _parse(path, texts[idx], idx + 2)  # raises the clear error
        raise TraceError(f"{path}:{idx + 2}: corrupt trace line (keys not in the trace format's order)")
    return list(map(_GROUP_1, matches))


def _seq_of(text: bytes) -> int:
    """The seq of a line whose prefix was checked (``{"seq":N,``)."""
    return int(text[7:text.index(b",", 7)])


# orjson reads an integer past 64 bits as a float, silently: a line with a run of 19+ digits goes to the stdlib.
_LONG_DIGITS = re.compile(r"\d{19}")
# in a line's bytes, the same run as a substring: every digit made a 0 (bytes.translate), then b"0" * 19 looked for
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def _loads(text: str | bytes) -> Any:
    """orjson's parser (3x the stdlib's; the replay parses every input line). What it would read differently (long
    integers) or refuses (NaN, lone surrogates; a corrupt line, which the stdlib names more clearly) is the stdlib's.

    A line's bytes are looked at for a run of 19 digits by translating every digit to 0 and searching for 19 zeros
    (both C loops over the bytes): 85 % of the instructions of writing the parsed line back to compare it with the
    line, which it replaces (a line written back byte for byte was read exactly), and far fewer than a regular
    expression's scan. A line with such a run that orjson did read exactly (a long string of digits) is read again
    by the stdlib: the same values."""
    try:
        d = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if text.__class__ is bytes:
        if _LONG_RUN not in text.translate(_DIGITS_AS_ZERO):  # type: ignore[union-attr]
            return d
    elif _LONG_DIGITS.search(text) is None:  # type: ignore[arg-type]
        return d
    return json.loads(text)


def _parse(path: str, text: str | bytes, lineno: int) -> dict[str, Any]:
    try:
        d = _loads(text)
        if not isinstance(d, dict):
            raise TypeError("not a JSON object")
        for key in ("seq", "ts", "sender", "receiver", "type"):
            if key not in d:
                raise KeyError(key)
        return d
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise TraceError(f"{path}:{lineno}: corrupt trace line ({e.__class__.__name__}: {e})") from None


# Inputs whose body the live transport decoded from JSON text (edges/transport.py notes it for the trace).
_FROM_THE_WIRE = frozenset({"NetRequest", "NetResponse"})


def _wire_body_text(text: bytes, type_name: str) -> str:
    """The recorded text of a NetRequest's / NetResponse's body, sliced out of its line as the live transport slices
    it out of the frame (the writer's fixed key order: ``body`` follows the int ids; NetRequest then ends with
    ``reply_expected``, NetResponse with the body itself)."""
    start = text.index(b'"body":', text.index(b'"payload":')) + 7
    end = text.rindex(b',"reply_expected":') if type_name == "NetRequest" else text.rindex(b'},"cause":')
    return text[start:end].decode("utf-8")


def _as_record(d: dict[str, Any], lineno: int) -> Record:
    return Record(int(d["seq"]), float(d["ts"]), d["sender"], d["receiver"], d["type"], d["payload"],
                  d.get("cause"), lineno)


def _record(path: str, text: bytes, lineno: int) -> Record:
    return _as_record(_parse(path, text, lineno), lineno)


def replay(path: str, until: int | None = None, check: bool = True, keep_runtime: bool = False,
           tamper: Callable[[Record, Any], Any] | None = None, scratch: str | None = None,
           record_to: str | None = None, thespian: bool = False) -> ReplayResult:
    """Replay the trace at ``path`` up to (and including) seq ``until``.

    ``tamper(record, body) -> body`` may alter an external input before it is delivered (tests use it to show that
    replay finds the first divergence). ``scratch`` is the folder the replayed log dirs live in; a broker's later
    incarnation must find there what its earlier ones wrote (see `replay_chain`). ``record_to`` makes the replayed
    runtime record its own trace there, as a live broker does (bench.trace_overhead measures what recording costs).
    The actors run on `InlineActorSystem` (simpleSystemBase's delivery order, less its per-message overhead), or
    with ``thespian`` on thespian's simpleSystemBase itself, as a live broker runs them.
    """
    from actors.broker import spawn_broker_actors

    ensure_registered()
    t0 = time.perf_counter()
    header, texts, flags, span = _read_lines(path)
    linenos: list[int] | None = None  # the file's line number of texts[i]: i + 2 unless --until dropped lines
    if until is not None:
        keep = [i for i, text in enumerate(texts) if _seq_of(text) <= until]
        texts, flags, linenos = [texts[i] for i in keep], [flags[i] for i in keep], [i + 2 for i in keep]
    result = ReplayResult(path, recorded_span_ms=span)
    from edges.trace_writer import code_digest

    if header.get("code") not in (None, code_digest()):
        log.warning("%s: recorded by other code (digest %s, this checkout %s): a divergence may be that change",
                    path, header.get("code"), code_digest())
        result.code_changed = True
    writer = None
    if record_to is not None:
        from edges.trace_writer import TraceWriter

        writer = TraceWriter(record_to, {k: v for k, v in header.items() if k not in ("trace_version", "code")})
    rt = Runtime(str(header.get("process", "replay")), clock=ManualClock(float(header.get("started_ms", 0))),
                 trace=writer, actor_system=None if thespian else InlineActorSystem())
    check_ = _Check(path, texts, flags, linenos, result, header.get("trace_version")) if check else None
    if check_ is not None:
        rt.observer = check_.observe
    own_scratch = scratch is None
    if scratch is None:
        scratch = _scratch_dir()
    # fewer young-generation collections while replaying (a tenth of what they cost: -1 % of the instructions); the
    # collector decides nothing the actors send
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _GC_YOUNG), *thresholds[1:])
    with bytes_file(path):  # the inputs' long bytes, from trace version 4 on
        try:
            refused = _recorded_append_failures(path, texts, flags, linenos)
            if refused:
                rt.edges = Edges(log_dirs=RecordedLogDirs(refused))
            spawn_broker_actors(rt)
            dirs_seen: dict[str, str] = {}  # recorded log dir → its scratch dir
            disk = header.get("disk")  # what its disk became since the last incarnation (a simulated one's)
            deliver = rt.deliver
            decode = from_json
            for i in itertools.compress(range(len(texts)), flags):  # the external inputs, in file order
                text = texts[i]
                lineno = i + 2 if linenos is None else linenos[i]
                d = _parse(path, text, lineno)
                try:
                    decoded = decode(d["payload"])
                except CodecError as e:
                    raise TraceError(f"{path}:{lineno}: {e}") from None
                except KeyError:  # no payload: as Record.payload would have been read
                    raise TraceError(f"{path}:{lineno}: corrupt trace line (KeyError: 'payload')") from None
                body = decoded
                if decoded.__class__ in _NAMING_PATHS:  # most inputs name no path: one set lookup
                    body = _rewrite_input(decoded, scratch, check_.paths if check_ is not None else {}, dirs_seen)
                    if disk is not None and body.__class__ is ReplicaManagerInit:
                        # what the disk lost since the last incarnation, before the broker reads its log dirs
                        _apply_disk(path, disk, dirs_seen)
                        disk = None
                if (writer is not None and body is decoded and d["type"] in _FROM_THE_WIRE
                        and _BYTES_FILE_REF not in text):
                    # as the live transport did with JSON frames: a network body's text is the wire's, not
                    # re-encoded (note_text); not a text naming the recorded bytes file, whose offsets are not this
                    # writer's
                    note_text(body.body, _wire_body_text(text, d["type"]))
                if tamper is not None:
                    body = tamper(_as_record(d, lineno), body)
                deliver(d["receiver"], body, d["sender"], d.get("cause"), at_ms=float(d["ts"]))
                result.delivered += 1
                if check_ is not None and check_.stopped:
                    if check_.error is not None:
                        raise check_.error
                    break
            if check_ is not None:
                check_.finish()
            result.compared = check_.j if check_ is not None else 0
        finally:
            gc.set_threshold(*thresholds)
            result.wall_s = time.perf_counter() - t0
            if keep_runtime:
                result.runtime = rt
            else:
                rt.shutdown()
            if own_scratch:
                shutil.rmtree(scratch, ignore_errors=True)
    return result


def replay_chain(paths: list[str], until: int | None = None, check: bool = True,
                 keep_runtime: bool = False, record_dir: str | None = None) -> list[ReplayResult]:
    """Replay one broker's incarnations (broker-<id>.jsonl, broker-<id>.1.jsonl, ...) in order on one scratch folder.

    A broker reads its log dirs when it starts (core/broker/log_manager.py: LogManager.load_logs; core/broker/log.py:
    Log._recover) and those reads are not trace inputs: a restarted broker finds what its previous incarnation
    appended. Every write to the log dirs happens in a handler, so replaying the earlier incarnations first rebuilds
    those files exactly — as far as their traces go (a SIGKILLed incarnation's trace may lack its last second). What a
    disk lost between two incarnations (a simulated power loss, a new disk) is in the later one's header, ``disk``,
    and is done to the scratch dir before it starts (kactor/trace/disk_change.py). ``until`` applies to the last file.
    ``record_dir``: each replayed incarnation records its own trace there, under the recorded file's name.
    """
    scratch = _scratch_dir()
    try:
        results = []
        for i, path in enumerate(paths):
            last = i == len(paths) - 1
            results.append(replay(path, until=until if last else None, check=check,
                                  keep_runtime=keep_runtime and last, scratch=scratch,
                                  record_to=None if record_dir is None
                                  else os.path.join(record_dir, os.path.basename(path))))
        return results
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _as_dict(r: Record) -> dict[str, Any]:
    return {"seq": r.seq, "ts": r.ts, "sender": r.sender, "receiver": r.receiver, "type": r.type,
            "payload": r.payload, "cause": r.cause}


def _unmap(text: bytes, paths: dict[bytes, bytes]) -> bytes:
    for scratch, original in paths.items():
        if scratch in text:
            text = text.replace(scratch, original)
    return text


class _Check:
    """The comparison of every message the replayed actors receive with the next recorded line, as it is recorded
    (the runtime's observer): ``j`` is the next line to compare; the first difference stops it."""

    __slots__ = ("path", "texts", "flags", "linenos", "result", "paths", "j", "stopped", "error", "encode",
                 "summarise")

    def __init__(self, path: str, texts: list[bytes], flags: list[bytes], linenos: list[int] | None,
                 result: ReplayResult, version: Any = None) -> None:
        self.path = path
        # the writer's encoder; a trace before version 3 held every line's bytes in full (version 1 as latin-1 text,
        # so a replay of one compares its bytes as version 2's base64 and diverges where a line holds bytes)
        self.encode: Callable[..., bytes] = encode_record_bytes if version not in (1, 2) else \
            functools.partial(encode_record_bytes, summarise=False)
        # what ``encode`` gives the encoder for a line that is not an input (long bytes summarised from version 3 on):
        # `observe` hands it over, as it only encodes such lines, sparing the encoder its look at the sender
        self.summarise = version not in (1, 2)
        self.texts = texts
        self.flags = flags
        self.linenos = linenos
        self.result = result
        self.paths: dict[bytes, bytes] = {}  # scratch log-dir path → recorded one, JSON-escaped
        self.j = 0
        self.stopped = False
        # what the comparison raised (an unencodable value, a corrupt expected line): kept, and raised by the replay
        # once the input's cascade is over, as when the comparison ran after it; raised here it would reach the actor
        # system, which retries a message whose delivery raised
        self.error: BaseException | None = None

    def _lineno(self, j: int) -> int:
        return j + 2 if self.linenos is None else self.linenos[j]

    def observe(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        if self.stopped:
            return  # past the first divergence, or past the end of the trace
        j = self.j
        # The two outcomes of nearly every message, decided as `compare` decides them: a recorded input delivered
        # at its place, or a produced message whose line is the recorded one. Its line is encoded with the summary
        # the encoder would pick for a sender that is not an input's: only a line whose recorded sender is not an
        # input's is encoded here, and a line from an input's sender cannot equal it (the prefixes are plain ASCII,
        # written as they are). Anything else (past the end, a difference, an error) goes to `compare`, which
        # decides it (tests/trace/test_replay_check.py gives both the same messages).
        try:
            if self.flags[j]:
                if sender.startswith(EXTERNAL_SENDERS) and _seq_of(self.texts[j]) == seq:
                    self.j = j + 1
                    return
            elif encode_record_bytes(seq, ts, sender, receiver, body, cause, self.summarise) == self.texts[j]:
                self.j = j + 1
                return
        except Exception:  # noqa: BLE001, S110 - `compare` meets it again and keeps it
            pass
        self.compare(j, seq, ts, sender, receiver, body, cause)

    def compare(self, j: int, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        """The whole comparison of a message with recorded line ``j``."""
        texts = self.texts
        try:
            if j >= len(texts):
                self.stopped = True  # the trace ends here (a crash, --until): what the replay adds cannot be checked
                return
            if sender.startswith(EXTERNAL_SENDERS):  # reader.is_external, inlined in the loop
                # the input itself (possibly tampered), delivered from this very line: its consequences are what is
                # checked; it only has to come at the recorded place
                if not self.flags[j] or _seq_of(texts[j]) != seq:
                    rec = _record(self.path, texts[j], self._lineno(j))
                    self._diverged(Divergence(rec.seq, "input", _as_dict(rec),
                                              {"seq": seq, "sender": sender, "receiver": receiver,
                                               "type": type(body).__name__, "cause": cause}))
                    return
                self.j = j + 1
                return
            expected = texts[j]
            actual = self.encode(seq, ts, sender, receiver, body, cause)  # the writer's bytes and newline
            # the line and its newline. Mapped back only when different: a line naming a scratch path cannot equal
            # its recorded line (which names the recorded path), and almost none names one
            if actual == expected:
                self.j = j + 1
                return
            if self.paths:
                actual = _unmap(actual, self.paths)
                if actual == expected:
                    self.j = j + 1
                    return
            exp = _parse(self.path, expected, self._lineno(j))
            act = json.loads(actual)
            field = next((f for f in _FIELDS if exp.get(f) != act.get(f)), "encoding")
            self._diverged(Divergence(_seq_of(expected), field, exp, act))
        except Exception as e:  # noqa: BLE001 - raised by the replay, outside the actor system
            self.error = e
            self.stopped = True

    def _diverged(self, divergence: Divergence) -> None:
        self.result.divergence = divergence
        self.stopped = True

    def finish(self) -> None:
        """After the last input: a recorded message the replay never produced is a divergence (every input was fed,
        so the actors did less)."""
        result = self.result
        if result.divergence is None and self.j < len(self.texts) and result.delivered:
            rec = _record(self.path, self.texts[self.j], self._lineno(self.j))
            result.divergence = Divergence(rec.seq, "missing", _as_dict(rec), None)


def prepare() -> None:
    """The set-up a replay needs whatever the trace, done once per process: the message types registered, the
    broker's actor modules imported, the checkout's code digest (a hash of every source file, compared with the
    header's), and the code generated per message class — a decoder and the trace line encoder
    (messages.codec.prepare). `replay_many` calls it before forking its workers, so they inherit it;
    a replay calls what it needs lazily otherwise. Nothing trace-dependent is kept: no value is encoded or decoded.
    """
    ensure_registered()
    from actors.broker import broker_actor_classes
    from edges.trace_writer import code_digest
    from messages import codec

    broker_actor_classes()
    code_digest()
    codec.prepare()


def in_forks(tasks: list[Any], jobs: int, fn: Callable[[Any], Any]) -> list[Any]:
    """``fn(task)`` for every task, by this process and ``jobs - 1`` forked workers each taking the next task (in
    list order) as soon as it is free; the answers in ``tasks`` order. A worker's exception is raised here."""
    if jobs <= 1 or len(tasks) <= 1:
        return [fn(t) for t in tasks]
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    next_task = ctx.Value("i", 0)

    def take() -> list[tuple[int, Any]]:
        out = []
        while True:
            with next_task.get_lock():
                i = next_task.value
                next_task.value = i + 1
            if i >= len(tasks):
                return out
            out.append((i, fn(tasks[i])))

    def work(send: Any) -> None:
        try:
            send.send(("ok", take()))
        except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
            send.send(("error", e))
        finally:
            send.close()

    # the set-up's objects (prepare, the scans) out of the collector's reach before the fork: a collection in a
    # worker writes to every object it traverses, copying the parent's pages it shares
    gc.freeze()
    workers = []
    for _ in range(min(jobs, len(tasks)) - 1):
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=work, args=(send,), daemon=True)
        proc.start()
        send.close()
        workers.append((proc, recv))
    try:
        answers = dict(take())
    except BaseException:
        for proc, _ in workers:
            proc.terminate()
            proc.join()
        raise
    finally:
        gc.unfreeze()
    failure: BaseException | None = None
    for proc, recv in workers:
        try:
            status, value = recv.recv()
        except EOFError:
            status, value = "error", RuntimeError(f"replay worker {proc.pid} died")
        proc.join()
        if status == "ok":
            answers.update(value)
        elif failure is None:
            failure = value
    if failure is not None:
        raise failure
    return [answers[i] for i in range(len(tasks))]


def replay_many(paths: list[str], until: int | None = None, check: bool = True, jobs: int = 1) -> list[ReplayResult]:
    """Replay several traces, one broker's incarnations in order (`replay_chain`), ``jobs`` brokers at a time:
    this process and ``jobs - 1`` forked workers each take the next chain (the largest first, by file size) as soon
    as they are free. Results come back in ``paths`` order, without their runtimes."""
    from kactor.trace.reader import broker_chains

    chains = broker_chains(paths)
    if jobs > 1 and len(chains) > 1:
        prepare()  # once, before the fork, not once per worker
        chains.sort(key=lambda c: -sum(os.path.getsize(p) for p in c))  # a big broker must not start last
    by_path = {r.path: r for results in in_forks(chains, jobs, lambda c: replay_chain(c, until=until, check=check))
               for r in results}
    return [by_path[p] for p in paths]


def check_trace_file(path: str) -> None:
    """Raise TraceError unless every line of ``path`` decodes to a known message type."""
    for rec in read_records(path):
        decode_body(path, rec)
    return None


__all__ = ["Divergence", "ReplayResult", "TraceError", "check_trace_file", "in_forks", "prepare", "replay",
           "replay_chain", "replay_many"]
