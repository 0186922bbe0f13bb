"""A whole run: its options, what it pins, each sample from request to record, the run directory."""
