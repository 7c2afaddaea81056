"""spark.session starts the driver JVM with its JIT options and the quiet log configuration."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_driver_jvm_options(spark: Any) -> None:
    from spark.session import JVM_OPTIONS

    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions").split()
    assert set(JVM_OPTIONS) <= set(options)
    assert any(o.startswith("-Dlog4j2.configurationFile=") for o in options)
    jvm_args = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    assert set(JVM_OPTIONS) <= set(jvm_args)  # the running JVM has them, not only the configuration


def test_adaptive_execution_off(spark: Any) -> None:
    assert spark.conf.get("spark.sql.adaptive.enabled") == "false"


def test_class_data_sharing_options(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver JVM maps the class-data archive when it exists, writes it (to a temporary name, renamed when the
    JVM has exited cleanly) only when asked, and not at all with KACTOR_SPARK_CDS=0."""
    import spark.session as session

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(session.CDS_ENV, raising=False)
    monkeypatch.setattr(session, "_dumping", {})
    options = " ".join(session._java_options())
    path = session.cds_archive_path(options)
    assert path is not None and path.startswith(str(tmp_path))
    assert session.cds_archive_missing()
    assert session._cds_options(options, dump=False) == []
    dump = session._cds_options(options, dump=True)
    assert dump[0] == f"-XX:ArchiveClassesAtExit={session._dumping['tmp']}" and session._dumping["final"] == path
    assert session._dumping["tmp"] != path
    with open(path, "wb") as f:
        f.write(b"archive")
    assert not session.cds_archive_missing()
    assert session._cds_options(options, dump=False)[0] == f"-XX:SharedArchiveFile={path}"
    assert session.cds_archive_path(options + " -Xss2m") != path  # other options, another archive
    monkeypatch.setenv(session.CDS_ENV, "0")
    assert session._cds_options(options, dump=False) == [] and not session.cds_archive_missing()


def test_standalone_master_urls() -> None:
    from spark.session import SparkMasterError, standalone_masters

    assert standalone_masters("spark://127.0.0.1:7077") == [("127.0.0.1", 7077)]
    assert standalone_masters("spark://m1:7077,m2:7078") == [("m1", 7077), ("m2", 7078)]
    assert standalone_masters("spark://[::1]:7077") == [("::1", 7077)]
    assert standalone_masters("local[2]") == [] and standalone_masters("yarn") == []
    for bad in ("spark://m1", "spark://:7077", "spark://m1:x", "spark://m1:70770"):
        with pytest.raises(SparkMasterError, match="not a Spark master URL"):
            standalone_masters(bad)


def test_check_master_fails_fast() -> None:
    """No Spark started: a closed port is refused at once; a master off this machine is refused before any
    connection while the driver would bind loopback (nothing leaves the machine: 192.0.2.1 is TEST-NET-1)."""
    from spark.session import SparkMasterError, check_master
    from zk_bridge.server import free_port

    port = free_port()
    with pytest.raises(SparkMasterError, match=rf"cannot reach the Spark master spark://127.0.0.1:{port} "
                                               rf"\(127.0.0.1:{port}: Connection refused\)"):
        check_master(f"spark://127.0.0.1:{port}")
    with pytest.raises(SparkMasterError, match="not on this machine's loopback.*spark.driver.host=ADDRESS"):
        check_master("spark://192.0.2.1:7077", timeout=0.01)
    check_master("local[2]")  # nothing to check


def test_active_session_seen_from_any_thread(spark: Any) -> None:
    """The running session is found from a thread that never used it (the JVM's thread-local active session is
    unset there): `kactor trace summarize` / `convert` run in-process must reuse it, not take it for theirs."""
    import threading

    from spark.session import active_session

    seen: list[Any] = []
    thread = threading.Thread(target=lambda: seen.append(active_session()))
    thread.start()
    thread.join(60)
    assert seen and seen[0] is not None and seen[0].sparkContext is spark.sparkContext


def test_the_tests_session_evaluates_interpreted(spark: Any) -> None:
    """The shared session (tests/spark/conftest.py) runs without generated code; kactor's own keep Spark's default."""
    assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "false"
