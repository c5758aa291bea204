"""spmdarray's scaling suite: workloads, baselines, peers, a driver, plots and the report.

Run ``python -m scaling --help``; ``docs/performance.md`` describes the suite
and holds its latest results.
"""
