"""End-to-end tests: the demo pipeline."""
