"""Timing and statistics helpers: percentiles, interleaved A/B sampling, concurrent load.

Every time is taken with `time.perf_counter_ns` around one client call (a full round trip) and
reported in microseconds. Comparisons interleave their sides call by call (A, B, A, B ... with
the starting side alternating), so drift on a noisy 2-core machine (another process, a
checkpoint, CPU frequency) lands on both sides alike instead of on whichever ran second; sides
of very different sizes alternate in blocks of calls instead (`interleaved(block=...)`).
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "percentile",
    "summarize",
    "ratio",
    "time_calls",
    "interleaved",
    "following",
    "run_concurrent",
]


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, linear interpolation."""
    if not sorted_values:
        return float("nan")
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] * (1 - frac) + sorted_values[hi] * frac


def summarize(samples_ns: list[int] | list[float]) -> dict[str, Any]:
    """n, p50/p95/p99, mean, min, max and stdev in microseconds."""
    values = sorted(v / 1000.0 for v in samples_ns)
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50_us": round(percentile(values, 50), 2),
        "p95_us": round(percentile(values, 95), 2),
        "p99_us": round(percentile(values, 99), 2),
        "mean_us": round(statistics.fmean(values), 2),
        "min_us": round(values[0], 2),
        "max_us": round(values[-1], 2),
        "stdev_us": round(statistics.pstdev(values), 2),
    }


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b rounded, None when either side is missing or b is zero."""
    if a is None or b is None or b == 0 or (isinstance(a, float) and math.isnan(a)):
        return None
    return round(a / b, 3)


def time_calls(fn: Callable[[], Any], n: int, warmup: int = 50) -> list[int]:
    """`n` timed calls of `fn` after `warmup` untimed ones; nanoseconds per call."""
    for _ in range(warmup):
        fn()
    out = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return out


def interleaved(fns: Mapping[str, Callable[[], Any]], n: int, warmup: int = 50,
                collect_every: int | None = None, block: int = 1) -> dict[str, list[int]]:
    """`n` timed calls of each function, interleaved call by call, the first side alternating.

    With `collect_every`, Python's cyclic garbage collector runs only between rounds (every that
    many), outside the timed calls, so one side's garbage is not collected during the other's.
    With `block`, each side makes that many calls in a row per round: a call that builds thousands
    of objects evicts the CPU caches of the whole process, and a small call right after it pays
    for that (`select 1` took four times as long after 32 MB were touched), so sides of very
    different sizes are compared in blocks, where only a block's first call follows the other side."""
    import gc

    if collect_every:
        gc.disable()
        try:
            return _interleaved(fns, n, warmup, collect_every, block)
        finally:
            gc.enable()
    return _interleaved(fns, n, warmup, None, block)


def _interleaved(fns: Mapping[str, Callable[[], Any]], n: int, warmup: int,
                 collect_every: int | None, block: int) -> dict[str, list[int]]:
    import gc

    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    out: dict[str, list[int]] = {name: [] for name in names}
    clock = time.perf_counter_ns
    for i in range(math.ceil(n / block)):
        if collect_every and i % max(1, collect_every // block) == 0:
            gc.collect()
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            fn = fns[name]
            samples = out[name]
            for _ in range(min(block, n - i * block)):
                t0 = clock()
                fn()
                samples.append(clock() - t0)
    return out


def following(before: Callable[[], Any], fn: Callable[[], Any], n: int, warmup: int = 5) -> list[int]:
    """`n` timed calls of `fn`, each right after an untimed call of `before` (garbage collected
    between pairs, outside the timings): what `fn` costs in a process that just ran `before`."""
    import gc

    for _ in range(warmup):
        before()
        fn()
    out = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for i in range(n):
            if i % 10 == 0:
                gc.collect()
            before()
            t0 = clock()
            fn()
            out.append(clock() - t0)
    finally:
        gc.enable()
    return out


def run_concurrent(
    make_client: Callable[[int], Callable[[], Any]],
    clients: int,
    duration_s: float,
    warmup_s: float = 1.0,
    close: Callable[[Callable[[], Any]], None] | None = None,
) -> dict[str, Any]:
    """`clients` threads, each calling its own `make_client(i)()` in a loop for `duration_s`
    (after `warmup_s` untimed). Returns calls, seconds, calls/s and per-call latencies."""
    callers = [make_client(i) for i in range(clients)]
    start_gate = threading.Barrier(clients + 1)
    timings: list[list[int]] = [[] for _ in range(clients)]
    errors: list[str] = []
    state = {"measure_from": 0, "stop_at": 0}

    def loop(i: int) -> None:
        call = callers[i]
        mine = timings[i]
        clock = time.perf_counter_ns
        start_gate.wait()
        try:
            while True:
                t0 = clock()
                if t0 >= state["stop_at"]:
                    return
                call()
                t1 = clock()
                if t0 >= state["measure_from"]:
                    mine.append(t1 - t0)
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    now = time.perf_counter_ns()
    state["measure_from"] = now + int(warmup_s * 1e9)
    state["stop_at"] = state["measure_from"] + int(duration_s * 1e9)
    start_gate.wait()
    for t in threads:
        t.join()
    if close is not None:
        for c in callers:
            close(c)
    all_ns = [v for per in timings for v in per]
    return {
        "clients": clients,
        "calls": len(all_ns),
        "seconds": duration_s,
        "per_second": round(len(all_ns) / duration_s, 1),
        "latency": summarize(all_ns),
        "errors": errors[:5],
        "error_count": len(errors),
    }
