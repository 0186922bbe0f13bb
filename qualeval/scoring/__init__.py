"""Extraction and score: the answer read from the final content, and the one verdict on it."""
