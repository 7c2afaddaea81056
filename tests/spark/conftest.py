"""One SparkSession for every Spark test (starting one costs seconds and about 1 GB), and the handcrafted trace
summarised once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from spark_support import write_trace


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from spark.session import build_session, stop_session

    session = build_session("local[2]", app_name="kactor-tests")
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
