"""Development and benchmark tooling beside the mmcritic library, never imported by it.

`mmcritic/` holds the pipeline a user runs (data, rewards, training, models, inference,
evaluation, demo); this package holds what the project uses to study and show it: the quickstart
driver and its plots, training profiling, self-critique cost and scaling studies, scorer
agreement, the raw-data generator for preprocessing benchmarks, and the demo's browser
screenshots. The scripts in `benchmarks/` and `scripts/` are thin calls into it.
"""
