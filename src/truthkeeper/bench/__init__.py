"""Benchmarks run by ``truthkeeper bench ...`` (JSON output, never timed tests)."""
