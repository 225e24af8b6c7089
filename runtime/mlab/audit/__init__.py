"""`mlab audit`: checks that a task can be trusted as a benchmark task (leaks, a sandbox probe, the baseline, cheap exploits)."""
