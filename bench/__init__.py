"""Benchmarks against Kafka's published controller figures (issue #10); see bench/common.py."""
