"""The metric catalogue: each name of spec/metrics.json mapped to its implementation.

Tabular metrics take the answers and a submission already aligned row by row on the
id (see `mlab.scoring.submission.load_and_validate`) plus the scored columns, and return a
float (`tabular`, with the catalogue `METRICS`, `score` and `get_metric`; `values`, what the
scored columns hold). Evaluator metrics (perplexity, custom) are computed by the task's declared
evaluator; here they only say so. The timed metric (runtime) is measured in the
sandbox by others; `outputs` and `timing` give its two pure parts: `compare_outputs` (does the
candidate's output match the reference?) and `timed_score` (medians and speed-up).

`improvement` and `is_success` (in `tabular`) turn a score and a baseline into the result's verdict.
Nothing here draws random numbers: the same inputs always give the same score.
"""
