"""Run the benchmarks: `python -m bench [--only context,writes] [--report-only]`.

Runs against DATABASE_URL (default: the benchmark cluster on port 54340; the shared test
database on 54322 is refused). Results are merged into bench/results.json (a workload run alone
replaces only its own entry), then bench/RESULTS.md and bench/plots/*.png are regenerated.
BENCH_SCALE=small gives a quick development run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from datetime import UTC, datetime

from .common import RESULTS_JSON, SCALE, bench_url, log

WORKLOADS = ("context", "writes", "reads", "kv_ttl", "sweep", "memories", "jobs", "locomo", "sessions")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help=f"comma-separated workloads to run (default all: {','.join(WORKLOADS)})")
    parser.add_argument("--report-only", action="store_true", help="only regenerate RESULTS.md and plots from results.json")
    args = parser.parse_args(argv)

    from . import report

    if args.report_only:
        report.write()
        return 0
    chosen = WORKLOADS if not args.only else tuple(w.strip() for w in args.only.split(",") if w.strip())
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {', '.join(WORKLOADS)}")
    bench_url()  # refuses the shared test database before anything runs
    results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    results.setdefault("workloads", {})
    if set(chosen) == set(WORKLOADS):
        results["workloads"] = {}
    status = 0
    started = time.monotonic()
    for name in chosen:
        log(f"=== {name} ===")
        t0 = time.monotonic()
        try:
            module = importlib.import_module(f"bench.{name}")
            entry = module.run()
        except Exception as exc:  # noqa: BLE001 - one workload failing must not lose the others
            traceback.print_exc()
            entry = {"error": f"{type(exc).__name__}: {exc}"}
            status = 1
        entry["seconds"] = round(time.monotonic() - t0, 1)
        entry["scale"] = SCALE
        entry["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        results["workloads"][name] = entry
        results["run"] = report.environment()
        results["run"]["scale"] = SCALE
        results["run"]["last_run_seconds"] = round(time.monotonic() - started, 1)
        results["run"]["last_run_workloads"] = list(chosen)
        RESULTS_JSON.write_text(json.dumps(results, indent=1, default=str) + "\n")
        log(f"=== {name} done in {entry['seconds']}s ===")
    report.write()
    return status


if __name__ == "__main__":
    sys.exit(main())
