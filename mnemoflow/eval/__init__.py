"""Evaluation: datasets, metrics and reports (LoCoMo evidence recall first)."""
