"""Compile a message spec (protocol/schema.py) into a Python encoder and decoder, the way Kafka's
``generator/.../MessageDataGenerator`` writes Java for each JSON schema.

One function pair per struct, specialised to its version: runs of fixed-size fields become a single
``struct.pack``/``unpack_from``, arrays of fixed-size numbers one more, flexible versions use compact lengths and a
tagged-field section. The source is registered in ``linecache`` (as attrs does) so tracebacks and debuggers show the
generated lines. Values are dicts keyed by Kafka's snake-case field names; a missing key encodes the field's default.
"""

from __future__ import annotations

import linecache
import struct
from collections.abc import Callable
from typing import Any

import attrs

from protocol import primitives as p
from protocol.errors import MalformedError, NullFieldError, TruncatedError, UnknownFieldError
from protocol.schema import FieldSpec, StructSpec

Encoder = Callable[[dict], bytes]
Decoder = Callable[[bytes, int], tuple[dict, int]]
EncoderInto = Callable[[bytearray, dict], None]

_VAR_READERS = {
    ("string", False): "read_string", ("string", True): "read_compact_string",
    ("bytes", False): "read_bytes", ("bytes", True): "read_compact_bytes",
}  # fmt: skip
_VAR_WRITERS = {
    ("string", False): "write_string", ("string", True): "write_compact_string",
    ("bytes", False): "write_bytes", ("bytes", True): "write_compact_bytes",
}  # fmt: skip


def _fixed(f: FieldSpec) -> bool:
    return f.kind == "prim" and f.tag is None and f.type in p.FORMATS


def _runs(spec: StructSpec) -> list[FieldSpec | list[FieldSpec]]:
    """The untagged fields in order, each run of consecutive fixed-size fields grouped into one list (one
    ``struct`` call on the wire side)."""
    out: list[FieldSpec | list[FieldSpec]] = []
    for f in spec.fields:
        if f.tag is not None:
            continue
        if not _fixed(f):
            out.append(f)
        elif out and isinstance(out[-1], list):
            out[-1].append(f)
        else:
            out.append([f])
    return out


def _unknown_fields(struct_name: str, value: dict, known: frozenset) -> UnknownFieldError:
    return UnknownFieldError(f"{struct_name} has no field {', '.join(sorted(map(str, value.keys() - known)))}; "
                             f"its fields are {', '.join(sorted(known))}")  # fmt: skip


def _too_many(buf: bytes, pos: int, n: int, size: int, field: str) -> TruncatedError:
    """Kafka's "Tried to allocate a collection of size N, but there are only M bytes remaining"."""
    return TruncatedError(f"{field}: {n} elements cannot fit in the {len(buf) - pos} bytes left")


def _min_size(spec: StructSpec) -> int:
    """The fewest bytes one element of ``spec`` takes on the wire (for the allocation check on array lengths)."""
    size = 1 if spec.flexible else 0
    for f in spec.fields:
        if f.tag is not None:
            continue
        if f.kind == "prim":
            if f.type in p.FORMATS:
                size += struct.calcsize(">" + p.FORMATS[f.type])
            elif f.type == "uuid":
                size += 16
            else:
                size += 1 if spec.flexible else (2 if f.type == "string" else 4)
        elif f.kind == "struct":
            size += 1 if f.nullable else _min_size(f.struct)  # type: ignore[arg-type]
        else:
            size += 1 if spec.flexible else 4
    return size


class _Generator:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {name: getattr(p, name) for name in dir(p) if not name.startswith("_")}
        self.ns["TruncatedError"] = TruncatedError
        self.ns["MalformedError"] = MalformedError
        self.ns["NullFieldError"] = NullFieldError
        self.ns["unknown_fields"] = _unknown_fields
        self.ns["too_many"] = _too_many
        self.ns["pack"] = struct.pack
        self.ns["unpack_from"] = struct.unpack_from
        self.done: dict[int, str] = {}
        self.counter = 0

    def const(self, value: object) -> str:
        if isinstance(value, int | float | str | bool) or value is None:
            return repr(value)
        name = f"_c{len(self.ns)}"
        self.ns[name] = tuple(value) if isinstance(value, list) else value
        return name

    def struct(self, spec: StructSpec) -> str:
        """Generate enc_/dec_ functions for ``spec`` (once) and return their suffix."""
        key = id(spec)
        if key in self.done:
            return self.done[key]
        self.counter += 1
        suffix = f"{spec.name}_{self.counter}"
        self.done[key] = suffix
        for f in spec.fields:
            if f.struct is not None:
                self.struct(f.struct)
        self._encoder(spec, suffix)
        self._decoder(spec, suffix)
        return suffix

    # encoding ---------------------------------------------------------------------------------------------
    def _encoder(self, spec: StructSpec, suffix: str) -> None:
        known = self.const(frozenset(f.name for f in spec.fields))
        out = [f"def enc_{suffix}(buf, v):", f"    if not v.keys() <= {known}:",
               f"        raise unknown_fields({spec.name!r}, v, {known})", "    g = v.get"]  # fmt: skip
        for f in _runs(spec):
            if isinstance(f, list):
                st = self.const(struct.Struct(">" + "".join(p.FORMATS[x.type] for x in f)))
                args = ", ".join(f"g({x.name!r}, {self.const(x.default)})" for x in f)
                out.append(f"    buf += {st}.pack({args})")
            else:
                out.append(f"    x = g({f.name!r}, {self.const(f.default)})")
                out += self._encode_value(f, "x", "buf", spec.flexible, "    ")
        if spec.flexible:
            tagged = sorted((f for f in spec.fields if f.tag is not None), key=lambda f: f.tag or 0)
            if not tagged:
                out.append("    buf.append(0)")
            else:
                out.append("    tags = []")
                for f in tagged:
                    d = self.const(f.default)
                    out.append(f"    x = g({f.name!r}, {d})")
                    out.append(f"    if x != {d}:")
                    out.append("        t = bytearray()")
                    out += self._encode_value(f, "x", "t", True, "        ")
                    out.append(f"        tags.append(({f.tag}, t))")
                out.append("    write_uvarint(buf, len(tags))")
                out.append("    for tag, t in tags:")
                out.append("        write_uvarint(buf, tag)")
                out.append("        write_uvarint(buf, len(t))")
                out.append("        buf += t")
        self.lines += out + [""]

    def _encode_value(self, f: FieldSpec, x: str, buf: str, flexible: bool, ind: str) -> list[str]:
        if f.kind == "prim":
            out = [ind + self._encode_prim(f.type, x, buf, flexible, f.nullable)]
            if f.type in ("string", "bytes") and not f.nullable:
                out.insert(0, f"{ind}if {x} is None:\n{ind}    raise NullFieldError('{f.name} cannot be null')")
            return out
        if f.kind == "struct":
            sub = self.done[id(f.struct)]
            if f.nullable:
                return [f"{ind}if {x} is None:", f"{ind}    {buf}.append(255)", f"{ind}else:",
                        f"{ind}    {buf}.append(1)", f"{ind}    enc_{sub}({buf}, {x})"]  # fmt: skip
            return [f"{ind}enc_{sub}({buf}, {x})"]
        out: list[str] = []
        # a legacy count is write_count's int32, packed here (no call per array)
        if f.nullable:
            out += [f"{ind}if {x} is None:",
                    f"{ind}    write_count({buf}, -1, True)" if flexible else f"{ind}    {buf} += I32.pack(-1)",
                    f"{ind}else:"]
            ind += "    "
        out.append(f"{ind}write_count({buf}, len({x}), True)" if flexible else f"{ind}{buf} += I32.pack(len({x}))")
        if f.kind == "struct_array":
            sub = self.done[id(f.struct)]
            out += [f"{ind}for e in {x}:", f"{ind}    enc_{sub}({buf}, e)"]
        elif f.type in p.FORMATS:
            out.append(f"{ind}{buf} += pack('>%d{p.FORMATS[f.type]}' % len({x}), *{x})")
        else:
            out += [f"{ind}for e in {x}:", f"{ind}    " + self._encode_prim(f.type, "e", buf, flexible)]
        return out

    def _encode_prim(self, type_: str, x: str, buf: str, flexible: bool, nullable: bool = True) -> str:
        if type_ in p.FORMATS:
            return f"{buf} += pack('>{p.FORMATS[type_]}', {x})"
        if type_ == "uuid":
            return f"{buf} += {x}.bytes"
        if type_ == "string" and not flexible and not nullable:
            # write_string's legacy string (its None already refused), without its two calls
            return f"s = {x}.encode(); {buf} += I16.pack(len(s)); {buf} += s"
        return f"{_VAR_WRITERS[type_, flexible]}({buf}, {x})"

    # decoding ---------------------------------------------------------------------------------------------
    def _decoder(self, spec: StructSpec, suffix: str) -> None:
        out = [f"def dec_{suffix}(buf, pos):"]
        names = {f.name: f"f{k}" for k, f in enumerate(spec.fields)}
        for f in _runs(spec):
            if isinstance(f, list):
                st = struct.Struct(">" + "".join(p.FORMATS[x.type] for x in f))
                targets = "".join(f"{names[x.name]}, " for x in f)
                out.append(f"    {targets}= {self.const(st)}.unpack_from(buf, pos)")
                out.append(f"    pos += {st.size}")
            else:
                out += self._decode_value(f, names[f.name], spec, "    ")
        if spec.flexible:
            tagged = [f for f in spec.fields if f.tag is not None]
            if not tagged:
                out.append("    pos = skip_tagged_fields(buf, pos)")
            else:
                for f in tagged:
                    d = f.default
                    # a fresh list/dict per message: decoded values are the caller's to change
                    fresh = "[]" if isinstance(d, list) else f"dict({self.const(d)})" if isinstance(d, dict) else None
                    out.append(f"    {names[f.name]} = {fresh or self.const(d)}")
                out += ["    n_tags, pos = read_uvarint(buf, pos)", "    for _ in range(n_tags):",
                        "        tag, pos = read_uvarint(buf, pos)", "        size, pos = read_uvarint(buf, pos)",
                        "        tag_end = pos + size", "        if tag_end > len(buf):",
                        "            raise TruncatedError('tagged field runs past the end')"]  # fmt: skip
                for k, f in enumerate(tagged):
                    out.append(f"        {'if' if k == 0 else 'elif'} tag == {f.tag}:")
                    out += self._decode_value(f, names[f.name], spec, "            ", force_flexible=True)
                out.append("        pos = tag_end")
        body = ", ".join(f"{f.name!r}: {names[f.name]}" for f in spec.fields)
        out.append(f"    return {{{body}}}, pos")
        self.lines += out + [""]

    def _decode_value(
        self, f: FieldSpec, var: str, spec: StructSpec, ind: str, force_flexible: bool = False
    ) -> list[str]:
        flexible = spec.flexible or force_flexible
        where = f"{spec.name}.{f.name}"
        if f.kind == "prim":
            out = self._decode_prim(f.type, var, flexible, ind)
            if f.type in ("string", "bytes") and not f.nullable:
                out += [f"{ind}if {var} is None:", f"{ind}    raise null_error({where!r})"]
            return out
        if f.kind == "struct":
            sub = self.done[id(f.struct)]
            if f.nullable:
                return [f"{ind}if buf[pos] == 255:", f"{ind}    {var} = None", f"{ind}    pos += 1", f"{ind}else:",
                        f"{ind}    {var}, pos = dec_{sub}(buf, pos + 1)"]  # fmt: skip
            return [f"{ind}{var}, pos = dec_{sub}(buf, pos)"]
        # an array: its length (any negative = null, as Kafka's generated readers), then the allocation check
        out = self._decode_length("n", flexible, ind, compact_minus_one=True)
        null = f"{var} = None" if f.nullable else f"raise null_error({where!r})"
        if f.kind == "struct_array":
            size = max(_min_size(f.struct), 1)  # type: ignore[arg-type]
        elif f.type in p.FORMATS:
            size = struct.calcsize(">" + p.FORMATS[f.type])
        else:
            size = 16 if f.type == "uuid" else (1 if flexible else (2 if f.type == "string" else 4))
        out += [f"{ind}if n < 0:", f"{ind}    {null}", f"{ind}elif n * {size} > len(buf) - pos:",
                f"{ind}    raise too_many(buf, pos, n, {size}, {where!r})", f"{ind}else:"]  # fmt: skip
        ind += "    "
        if f.kind == "struct_array":
            sub = self.done[id(f.struct)]
            out += [f"{ind}{var} = []", f"{ind}append = {var}.append", f"{ind}for _ in range(n):",
                    f"{ind}    e, pos = dec_{sub}(buf, pos)", f"{ind}    append(e)"]  # fmt: skip
        elif f.type in p.FORMATS:
            c = p.FORMATS[f.type]
            out += [f"{ind}{var} = list(unpack_from('>%d{c}' % n, buf, pos)) if n else []", f"{ind}pos += n * {size}"]
        else:
            out += [f"{ind}{var} = []", f"{ind}for _ in range(n):"]
            out += self._decode_prim(f.type, "e", flexible, ind + "    ")
            if f.type != "uuid":
                out += [f"{ind}    if e is None:", f"{ind}        raise null_error({where!r})"]
            out.append(f"{ind}    {var}.append(e)")
        return out

    def _decode_length(self, var: str, flexible: bool, ind: str, compact_minus_one: bool) -> list[str]:
        """Inline length reading: an unsigned varint (one byte in the common case) when flexible, else int32."""
        if not flexible:
            return [f"{ind}{var}, = I32.unpack_from(buf, pos)", f"{ind}pos += 4"]
        out = [f"{ind}{var} = buf[pos]", f"{ind}if {var} < 128:", f"{ind}    pos += 1", f"{ind}else:",
               f"{ind}    {var}, pos = read_uvarint(buf, pos)"]  # fmt: skip
        if compact_minus_one:
            out.append(f"{ind}{var} -= 1")
        return out

    def _decode_prim(self, type_: str, var: str, flexible: bool, ind: str) -> list[str]:
        if type_ in p.FORMATS:
            c = p.FORMATS[type_]
            return [f"{ind}{var}, = unpack_from('>{c}', buf, pos)", f"{ind}pos += {struct.calcsize('>' + c)}"]
        if type_ == "uuid":
            return [f"{ind}{var}, pos = read_uuid(buf, pos)"]
        # strings and bytes inline in the common case (a short compact length, or a non-negative legacy one); the
        # rest (null, long varints, malformed lengths) through the primitives' readers
        text = ".decode()" if type_ == "string" else ""
        reader = _VAR_READERS[type_, flexible]
        if flexible:
            head = [f"{ind}n = buf[pos]", f"{ind}if 0 < n < 128:", f"{ind}    end = pos + n"]
            start = "pos + 1"
        else:
            fmt = "I16" if type_ == "string" else "I32"
            width = 2 if type_ == "string" else 4
            head = [f"{ind}n, = {fmt}.unpack_from(buf, pos)", f"{ind}if n >= 0:", f"{ind}    end = pos + {width} + n"]
            start = f"pos + {width}"
        return head + [
            f"{ind}    if end > len(buf):",
            f"{ind}        raise TruncatedError('{type_} runs past the end')",
            f"{ind}    {var} = buf[{start}:end]{text}",
            f"{ind}    pos = end",
            f"{ind}else:",
            f"{ind}    {var}, pos = {reader}(buf, pos)",
        ]


@attrs.frozen(slots=True)
class CompiledCodec:
    """One message's generated functions: ``encode(value) -> bytes``; ``encode_into(buf, value)`` appends the
    encoding to ``buf`` (a frame built in one buffer copies a Fetch answer's records once); ``decode(buf, pos) ->
    (value, end)`` raises only ``ProtocolError``s; and their source."""

    encode: Encoder
    decode: Decoder
    encode_into: EncoderInto
    source: str


def compile_codec(spec: StructSpec, label: str) -> CompiledCodec:
    """Generate and compile the functions of the message ``spec``."""
    gen = _Generator()
    root = gen.struct(spec)
    gen.lines += [
        "def encode(v):",
        "    buf = bytearray()",
        f"    enc_{root}(buf, v)",
        "    return bytes(buf)",
        "",
        f"encode_into = enc_{root}",
        "",
        "def decode(buf, pos=0):",
        "    if type(buf) is not bytes:",
        "        buf = bytes(buf)  # bytearray/memoryview: slices must be bytes (decode(), values kept)",
        "    try:",
        f"        return dec_{root}(buf, pos)",
        "    except (struct_error, IndexError):",
        f"        raise TruncatedError('{spec.name}: the buffer ends inside the message') from None",
        "    except UnicodeDecodeError as e:",
        f"        raise MalformedError(f'{spec.name}: a string is not UTF-8: {{e}}') from None",
        "",
    ]
    gen.ns["struct_error"] = struct.error
    source = "\n".join(gen.lines)
    filename = f"<kafka codec {label}>"
    exec(compile(source, filename, "exec"), gen.ns)  # noqa: S102 — our own generated source, no outside input
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return CompiledCodec(gen.ns["encode"], gen.ns["decode"], gen.ns["encode_into"], source)
