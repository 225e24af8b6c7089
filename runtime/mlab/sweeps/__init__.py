"""Sweeps: plan an experiment's runs, run each exactly once through an executor (local or Ray), keep its state, report it."""
