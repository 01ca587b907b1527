"""Benchmarks run by ``truthkeeper bench ...`` (JSON output, never timed tests)."""

import statistics as _statistics
import time as _time
from collections.abc import Callable as _Callable
from typing import Any as _Any


def median_time(fn: _Callable[[], _Any], repeat: int, unit: float = 1e3) -> float:
    """The median time of ``repeat`` calls of ``fn``, in seconds times ``unit`` (ms)."""
    runs = []
    for _ in range(repeat):
        t = _time.perf_counter()
        fn()
        runs.append((_time.perf_counter() - t) * unit)
    return _statistics.median(runs)


PEAK_RSS_CODE = r"""
def peak_rss_mb():
    # the peak resident set of this process: VmHWM, which starts afresh at exec;
    # getrusage's ru_maxrss would also count the parent's size at fork
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
"""Source of ``peak_rss_mb()`` for the probes that benchmarks run in fresh processes."""
