"""supamem benchmarks: latency, throughput, scaling and retrieval quality (`make bench`).

Not tests: `make test` never runs them. Each workload is one module (context, writes, reads,
kv_ttl, sweep, memories, jobs, locomo); `python -m bench` runs them against the database in
DATABASE_URL (its own cluster, port 54340, under `make bench`), writes bench/results.json, and
`bench.report` turns that into bench/RESULTS.md and bench/plots/*.png.
"""
