"""Benchmarks: `make bench` runs them; figures are printed, never asserted."""
