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
