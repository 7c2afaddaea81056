"""One SparkSession for every Spark test (starting one costs seconds and about 1 GB), and the handcrafted trace
summarised once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from spark_support import write_trace

# The tests' traces are tens to thousands of lines: compiling each query's generated Java (Janino, then the JIT) is
# most of a summary's time there, and interpreted evaluation gives the same rows (Spark's own suites run both). A
# handcrafted summary: 6.5-8.1 -> 3.5-4.9 s written, 5.1-6.0 -> 3.2-3.9 s from the cache (load 19-21). kactor's
# sessions keep Spark's code generation: test_spark_standalone.py holds its tables (`kactor trace summarize` in a
# process of its own) to these byte for byte.
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from spark.session import build_session, stop_session

    session = build_session("local[2]", app_name="kactor-tests", conf=INTERPRETED)
    try:
        yield session
    finally:
        stop_session(session)


@pytest.fixture(scope="session")
def handcrafted(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_trace(str(tmp_path_factory.mktemp("handcrafted")))


@pytest.fixture(scope="session")
def summary(spark: Any, handcrafted: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The handcrafted trace summarised once (1 s buckets), written to a temp folder (result["out"])."""
    from spark.summarize import summarize

    out = str(tmp_path_factory.mktemp("summary"))
    result = summarize(spark, [handcrafted], out, bucket_ms=1000)
    result["out"] = out
    return result
