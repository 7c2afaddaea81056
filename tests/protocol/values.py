"""Random message values drawn from a message spec, for the codec tests (shared by the kio and kafka-python checks)."""

from __future__ import annotations

import random
import uuid

from protocol.schema import FieldSpec, StructSpec

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}  # fmt: skip
# kio turns these into Python objects with narrower ranges (ErrorCode members, timedelta, aware datetimes)
_SEMANTIC_RANGES = {"timedelta_i64": (-(2**50), 2**50), "datetime_i64": (0, 2**45)}
_ERROR_CODES = (0, 1, 3, 35, 41, 42, 87)
_ALPHABET = "abcXYZ09._-é☃"


def _int(kind: str, semantic: str, rng: random.Random) -> int:
    if semantic == "error_code":
        return rng.choice(_ERROR_CODES)
    lo, hi = _SEMANTIC_RANGES.get(semantic) or _INT_RANGES[kind]
    if semantic == "datetime_i64":  # kio reads instants through a float and may lose the last millisecond
        return rng.randint(0, 2**30) * 1000
    return rng.choice((lo, hi, 0, -1 if lo < 0 else 1, rng.randint(lo, hi)))


def _prim(f: FieldSpec, rng: random.Random, nullable: bool) -> object:
    if nullable and rng.random() < 0.25:
        return None
    t = f.type
    if t in _INT_RANGES:
        return _int(t, f.semantic, rng)
    if t == "bool":
        return rng.random() < 0.5
    if t == "float64":
        return rng.choice((0.0, -1.5, 1e300, rng.uniform(-1e9, 1e9)))
    if t == "string":
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 8)))
    if t == "bytes":
        return rng.randbytes(rng.randint(0, 12))
    if t == "uuid":
        return uuid.UUID(int=rng.getrandbits(128) or 1)
    raise AssertionError(t)


def random_value(spec: StructSpec, rng: random.Random, depth: int = 0) -> dict:
    """Every field of ``spec`` with a random value (arrays of 0-3 elements, nulls where the field is nullable)."""
    out: dict = {}
    for f in spec.fields:
        if f.tag is not None and rng.random() < 0.4:
            out[f.name] = f.default  # an absent tagged field
            continue
        if f.kind == "prim":
            out[f.name] = _prim(f, rng, f.nullable)
        elif f.kind == "struct":
            out[f.name] = None if f.nullable and rng.random() < 0.3 else random_value(f.struct, rng, depth + 1)
        elif f.nullable and rng.random() < 0.25:
            out[f.name] = None
        else:
            n = rng.randint(0, 3 if depth < 3 else 1)
            if f.kind == "struct_array":
                out[f.name] = [random_value(f.struct, rng, depth + 1) for _ in range(n)]
            else:
                out[f.name] = [_prim(f, rng, False) for _ in range(n)]
    return out


def defaults(spec: StructSpec) -> dict:
    """The value an empty dict encodes as: every field at its default."""
    return {
        f.name: (defaults(f.struct) if f.kind == "struct" and not f.nullable else f.default)
        for f in spec.fields
    }
