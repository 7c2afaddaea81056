"""The columns cache: a JSON-lines trace folder read once into Parquet columns beside it, ``<trace>/.kactor-columns/``.

The first summary of a folder parses its JSON once (``spark.load.lines``: the writer's fixed key order, byte cuts)
and writes every line but the headers as a row: ``_name`` (the file's name), TRACE_SCHEMA's fields, ``_fast`` (a
fixed-order record; otherwise the fields are null and ``payload`` holds the whole line, parsed in full where it is
read), for a fixed-order record the summary reads its payload parsed and its errors (schema.PARSED_FIELDS: one struct
column per observability type, ``errors``, ``_pbad``; version 2 of the cache, so that a summary from it runs no
from_json and no regular expression) and the partition column ``observed`` (an observability record, a line carrying
an error other than NONE, or a slow line: what the summary's observed read needs, so that read skips the other rows'
folder). That summary is then computed from these columns, and a later one reads them instead of the JSON.

The cache is keyed by each ``*.jsonl`` file's name, size and modification time and by CACHE_VERSION
(``_kactor_columns.json``); any difference and it is rebuilt. It is committed (renamed into place) only after the
summary that wrote it found the trace valid, and only if no file changed while it was read (a trace still being
written: its next summary writes the columns again). A single ``.jsonl`` file given as input, or a folder that
cannot be written to, gets its columns in a temporary folder, removed after the summary. ``KACTOR_TRACE_COLUMNS=0``
turns the cache off (temporary columns only).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spark.load import TraceSource, file_process

CACHE_DIR = ".kactor-columns"
CACHE_META = "_kactor_columns.json"
# 2: a fixed-order row the summary reads holds its parsed payload and errors (schema.PARSED_FIELDS); a cache of
# another version is rebuilt
CACHE_VERSION = 2
# a file whose last line is incomplete and that was written to this recently may be a trace still being written
SETTLED_S = 10.0


@dataclass
class ColumnsDir:
    """One trace folder's columns: ``path`` (a Parquet dataset), the folder it was read from, whether it was read
    from the cache (``cached``), and, for columns written by this summary, what to do with them after it."""

    path: str
    folder: str
    cached: bool
    key: list[dict[str, Any]] = field(default_factory=list)
    # what the summary adds before each process's name (TraceFile.prefix: "seed-2/" for a campaign folder's seed
    # folder): the columns hold the files' own names, so the cache is the same whichever way the folder was given
    prefix: str = ""
    commit_to: str | None = None  # the cache folder to rename ``path`` to once the summary found the trace valid
    temporary: bool = False  # removed after the summary (not cacheable)


def enabled() -> bool:
    return os.environ.get("KACTOR_TRACE_COLUMNS", "1") != "0"


def file_key(paths: list[str]) -> list[dict[str, Any]]:
    """Name, size and modification time (ns) of each file: what the cache is valid for."""
    out = []
    for p in sorted(paths):
        st = os.stat(p)
        out.append({"name": os.path.basename(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    return out


def cached_dir(folder: str, key: list[dict[str, Any]]) -> str | None:
    """The folder's cache if it is complete and its key equals ``key``, else None."""
    cache = os.path.join(folder, CACHE_DIR)
    try:
        with open(os.path.join(cache, CACHE_META), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("cache_version") != CACHE_VERSION or meta.get("files") != key:
        return None
    return cache


def _groups(src: TraceSource) -> list[tuple[str, str, list[str], bool]]:
    """``(folder, prefix, files, cacheable)`` per input: a folder's files share one cache (a campaign folder's seed
    folders have one each); a single file does not."""
    by_folder: dict[tuple[str, str], list[str]] = {}
    for tf in src.jsonl:
        by_folder.setdefault((os.path.dirname(os.path.abspath(tf.path)), tf.prefix), []).append(tf.path)
    out = []
    for (folder, prefix), files in by_folder.items():
        every = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))
        out.append((folder, prefix, files, sorted(os.path.abspath(f) for f in files) == every))
    return out


def prepare(spark: Any, src: TraceSource) -> list[ColumnsDir]:
    """Every JSON-lines input of ``src`` as columns: the cache where it is valid, else written now (one JSON pass
    per folder)."""
    out = []
    for folder, prefix, files, cacheable in _groups(src):
        cacheable = cacheable and enabled()
        key = file_key(files)
        if cacheable and (hit := cached_dir(folder, key)) is not None:
            out.append(ColumnsDir(hit, folder, True, key, prefix))
            continue
        out.append(write(spark, src, folder, files, key, cacheable, prefix))
    return out


def _mkdtemp(folder: str, cacheable: bool) -> tuple[str, bool]:
    if cacheable:
        try:
            return tempfile.mkdtemp(prefix=CACHE_DIR + ".tmp-", dir=folder), False
        except OSError:
            pass  # a folder we cannot write to: temporary columns elsewhere
    return tempfile.mkdtemp(prefix="kactor-columns-"), True


def write(spark: Any, src: TraceSource, folder: str, files: list[str], key: list[dict[str, Any]],
          cacheable: bool, prefix: str = "") -> ColumnsDir:
    """Parse ``files`` (of ``folder``) once and write their columns, each row's process named by its file alone
    (``frame`` adds ``prefix``); commit them later with ``finish``."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.load import lines, parsed_columns, payload_bad
    from spark.schema import ANY_ERROR_RE, OBS_TYPES

    started = time.time()
    tmp, temporary = _mkdtemp(folder, cacheable)
    data = os.path.join(tmp, "data")
    wanted = {os.path.abspath(f) for f in files}
    group = TraceSource(jsonl=[replace(tf, process=file_process(tf.path)) for tf in src.jsonl
                               if os.path.abspath(tf.path) in wanted and tf.prefix == prefix])
    text, fast = F.col("_text"), F.col("_fast")
    # the payload as the exact bytes the writer wrote (byte positions, so binary), as spark.load.resolve cuts it
    start = F.octet_length(F.substring_index(text, '","payload":', 1)) + len('","payload":') + 1
    end = F.octet_length(text) - F.octet_length(F.substring_index(text, ',"cause":', -1)) - len(',"cause":')
    cut = F.substring(text.cast("binary"), start, end - start + 1).cast("string")
    kept = ~fast | F.col("type").isin(*OBS_TYPES) | text.rlike(ANY_ERROR_RE)
    rows = lines(spark, group).where((fast | ~F.col("_head")) & (F.col("_part") >= 0))
    # a fixed-order row's payload parsed and its errors found here, once (version 2): a summary from the cache then
    # reads them as columns (``parsed``) and runs no from_json and no regular expression
    (rows.select(F.concat("process", F.lit(".jsonl")).alias("_name"), "process", "seq", "ts", "sender",
                 "receiver", "type", "cause", F.when(fast, cut).otherwise(text).alias("payload"), "_fast",
                 *parsed_columns(text, F.col("_doc"), only=fast & kept), kept.alias("observed"))
     .select("*", payload_bad(fast & F.col("observed")))
     .write.partitionBy("observed").parquet(data))
    after = file_key(files)
    mtime = {st["name"]: st["mtime_ns"] / 1e9 for st in after}
    unsettled = any(tf.truncated_last_line is not None and started - mtime[os.path.basename(tf.path)] < SETTLED_S
                    for tf in group.jsonl)
    commit = None if temporary or after != key or unsettled else os.path.join(folder, CACHE_DIR)
    return ColumnsDir(data, folder, False, key, prefix, commit_to=commit, temporary=commit is None)


def finish(dirs: list[ColumnsDir], valid: bool) -> None:
    """After the summary: commit the columns it wrote of a valid trace (meta last, so a half-written cache is never
    read), remove the others."""
    for d in dirs:
        if d.cached:
            continue
        tmp = os.path.dirname(d.path)
        if not valid or d.commit_to is None:
            shutil.rmtree(tmp, ignore_errors=True)
            continue
        with open(os.path.join(tmp, CACHE_META), "w", encoding="utf-8") as f:
            json.dump({"cache_version": CACHE_VERSION, "files": d.key}, f, indent=1)
            f.write("\n")
        old = d.commit_to + f".old-{os.getpid()}-{time.monotonic_ns()}"
        try:
            if os.path.exists(d.commit_to):
                os.rename(d.commit_to, old)
            os.rename(tmp, d.commit_to)
        except OSError:  # another summary committed first: keep its columns
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def frame(spark: Any, d: ColumnsDir) -> Any:
    """``d``'s rows with ``spark.load.lines``'s columns (``_file`` the file's URL, ``_text`` the payload, or a slow
    line's whole text, ``_doc`` a JSON object whose ``payload`` key holds the payload, ``_part`` 0: a filter on
    these rows is pushed down into the Parquet scan, which skips what it cannot hold) and ``observed``."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import CACHE_SCHEMA

    pq = spark.read.schema(CACHE_SCHEMA).parquet(d.path)
    prefix = folder_url(d)
    payload, fast = F.col("payload"), F.col("_fast")
    return pq.select(
        F.concat(F.lit(prefix), F.col("_name")).alias("_file"), _process(d), "seq", "ts", "sender", "receiver", "type",
        "cause", "_fast", F.lit(False).alias("_head"), payload.alias("_text"),
        F.when(fast, F.concat(F.lit('{"payload":'), payload, F.lit("}"))).otherwise(payload).alias("_doc"),
        "observed", F.lit(0).alias("_part"))


def parsed(spark: Any, d: ColumnsDir) -> Any:
    """The fixed-order rows of ``d`` the summary's observed read needs (``observed``), as ``summarize.observed``
    gives them: ``_file``, ``process``, ``seq``, ``ts``, ``type`` and schema.PARSED_FIELDS, read as they were
    parsed into the cache (no JSON parsed, no regular expression run here)."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import CACHE_SCHEMA, PARSED_FIELDS

    pq = spark.read.schema(CACHE_SCHEMA).parquet(d.path)
    prefix = folder_url(d)
    return pq.where(F.col("observed") & F.col("_fast")).select(
        F.concat(F.lit(prefix), F.col("_name")).alias("_file"), _process(d), "seq", "ts", "type",
        *[f.name for f in PARSED_FIELDS])


def _process(d: ColumnsDir) -> Any:
    """The ``process`` column of ``d``'s rows: as cached (the file's name), after ``d.prefix`` if any."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    if not d.prefix:
        return F.col("process")
    return F.concat(F.lit(d.prefix), F.col("process")).alias("process")


def counted(spark: Any, d: ColumnsDir, index: int) -> Any:
    """What the count reads of every row of ``d``: ``_dir`` (``index``: which of the summary's columns folders),
    ``_name`` (the file's name: its URL and process are made from it after the aggregation, not for every row),
    ``sender``, ``receiver``, ``type``, ``ts``, ``_fast``, ``_head`` (false: the cache holds no headers)."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import CACHE_SCHEMA

    pq = spark.read.schema(CACHE_SCHEMA).parquet(d.path)
    return pq.select(F.lit(index).alias("_dir"), "_name", "sender", "receiver", "type", "ts", "_fast",
                     F.lit(False).alias("_head"))


def folder_url(d: ColumnsDir) -> str:
    """What ``frame`` puts before a row's file name in its ``_file`` (the URL of ``d``'s folder, with a slash)."""
    return Path(d.folder).resolve().as_uri() + "/"
