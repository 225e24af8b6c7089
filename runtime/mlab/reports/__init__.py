"""Reports over runs: loading runs, evaluation tables, comparisons, statistics, plots and the failure taxonomy."""
