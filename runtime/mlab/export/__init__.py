"""Exports to the formats other tools read: runs as ATIF trajectories (atif) and Inspect AI logs
(inspect_log), read into one conversation form first (turns), and as an MLE-bench grading report
(mlebench). docs/interop.md maps every field."""
