"""kactor.attrs_code_cache: attrs' generated methods taken from the file an earlier process wrote are the methods
attrs compiles itself (the same code, the same behaviour); a file another process wrote meanwhile is merged, not
lost; a damaged file or entry is compiled afresh; ``KACTOR_ATTRS_CODE_CACHE=0`` leaves attrs alone."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

from kactor import attrs_code_cache

REPO = Path(__file__).resolve().parents[2]

MODULE = '''
import attrs

@attrs.frozen(slots=True)
class Point:
    x: int
    y: int = 0

@attrs.define(slots=True, eq=False)
class Box:
    items: list = attrs.Factory(list)
    name: str = attrs.field(default="box", kw_only=True)

@attrs.frozen(slots=True, cache_hash=True, order=True)
class Tag:
    value: str
'''

PROBE = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from kactor import attrs_code_cache as a
import shapes
cache = a._installed[0] if a._installed else None
methods = {}
for cls in (shapes.Point, shapes.Box, shapes.Tag):
    for name in ("__init__", "__eq__", "__repr__", "__hash__", "__lt__", "__setattr__"):
        code = getattr(getattr(cls, name, None), "__code__", None)
        if code is not None and code.co_filename.startswith("<attrs generated"):
            methods[f"{cls.__name__}.{name}"] = [code.co_code.hex(), repr(code.co_consts), code.co_names,
                                                 code.co_varnames, code.co_filename]
behaviour = [repr(shapes.Point(1, 2)), shapes.Point(1, 2) == shapes.Point(1, 2), hash(shapes.Point(1, 2)),
             repr(shapes.Box([1], name="b")), shapes.Tag("a") < shapes.Tag("b"), hash(shapes.Tag("x"))]
print(json.dumps({"methods": methods, "behaviour": behaviour,
                  "hits": cache.hits if cache else None, "new": len(cache.new) if cache else None}))
if cache is not None and sys.argv[2] == "save":
    cache.save()
'''


def _probe(tmp_path: Path, setting: str, save: bool) -> dict:
    (tmp_path / "mod").mkdir(exist_ok=True)
    (tmp_path / "mod" / "shapes.py").write_text(MODULE)
    env = dict(os.environ, KACTOR_ATTRS_CODE_CACHE=setting, PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))))
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "mod"), "save" if save else "-"], env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_methods_from_the_file_are_the_ones_attrs_compiles(tmp_path: Path) -> None:
    folder = str(tmp_path / "cache")
    plain = _probe(tmp_path, "0", save=False)
    first = _probe(tmp_path, folder, save=True)
    second = _probe(tmp_path, folder, save=False)
    assert plain["hits"] is None  # off: attrs' own compile step
    assert first["hits"] == 0 and first["new"] >= 3  # compiled here, written for the next process
    assert os.path.exists(attrs_code_cache.cache_path(folder))
    assert second["new"] == 0 and second["hits"] >= first["new"]
    assert set(plain["methods"]) >= {"Point.__init__", "Point.__eq__", "Point.__repr__", "Point.__hash__",
                                     "Box.__init__", "Tag.__init__", "Tag.__hash__"}
    assert first["methods"] == plain["methods"] and second["methods"] == plain["methods"]
    assert first["behaviour"] == plain["behaviour"] and second["behaviour"] == plain["behaviour"]


def test_what_another_process_wrote_meanwhile_is_kept(tmp_path: Path) -> None:
    path = attrs_code_cache.cache_path(str(tmp_path))
    one, two = attrs_code_cache.AttrsCodeCache(path), attrs_code_cache.AttrsCodeCache(path)
    one.compile("a = 1\n", "<one>")
    two.compile("b = 2\n", "<two>")
    one.save()
    two.save()
    three = attrs_code_cache.AttrsCodeCache(path)
    ns: dict = {}
    exec(three.compile("a = 1\n", "<one>"), ns)  # noqa: S102
    exec(three.compile("b = 2\n", "<two>"), ns)  # noqa: S102
    assert (ns["a"], ns["b"], three.hits, three.new) == (1, 2, 2, {})


def test_a_damaged_file_or_entry_is_compiled_afresh(tmp_path: Path) -> None:
    path = attrs_code_cache.cache_path(str(tmp_path))
    os.makedirs(tmp_path, exist_ok=True)
    Path(path).write_bytes(b"\x00not marshal")
    cache = attrs_code_cache.AttrsCodeCache(path)
    ns: dict = {}
    exec(cache.compile("c = 3\n", "<c>"), ns)  # noqa: S102
    assert (ns["c"], cache.hits) == (3, 0)
    cache.save()  # the damaged file is replaced
    key = attrs_code_cache.AttrsCodeCache.key("c = 3\n", "<c>")
    Path(path).write_bytes(marshal.dumps({key: b"garbage"}))
    again = attrs_code_cache.AttrsCodeCache(path)
    exec(again.compile("c = 3\n", "<c>"), ns)  # noqa: S102
    assert (ns["c"], again.hits, list(again.new)) == (3, 0, [key])
