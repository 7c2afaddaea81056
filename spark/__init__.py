"""Spark pipeline that summarises kactor message traces (format: docs/trace-format.md).

Modules: ``session`` (SparkSession builder), ``schema`` (explicit schemas), ``load`` (validation and loading of
JSON-lines or Parquet traces), ``summarize`` (the summary tables), ``report`` (HTML + PNG report, terminal summary),
``generate`` (synthetic traces), ``convert`` (JSON-lines → Parquet), ``bench`` (Spark vs DuckDB), ``job``
(``spark-submit spark/job.py``).
"""
