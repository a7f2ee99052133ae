"""Helpers shared by tests and benchmarks (real components started on loopback)."""
