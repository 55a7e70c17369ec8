"""Server settings for the benchmark cluster (`make bench` restarts it after this runs).

The local stack's defaults (shared_buffers 128MB, max_wal_size 1GB) suit tests, not 10^7 rows;
these are ordinary production-style settings for a 24 GB machine, applied with ALTER SYSTEM to
the benchmark's own cluster only (port 54340), never the shared test database.
"""

from __future__ import annotations

from .common import admin, bench_url, log

SETTINGS = {
    "shared_buffers": "2GB",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "15min",
    "effective_cache_size": "12GB",
}


def main() -> None:
    bench_url()
    with admin() as conn:
        for name, value in SETTINGS.items():
            conn.execute(f"alter system set {name} = '{value}'")  # fixed names and values above
    log("server settings: " + ", ".join(f"{k}={v}" for k, v in SETTINGS.items()) + " (restart to apply)")


if __name__ == "__main__":
    main()
