"""Prefect flows: thin orchestration of the plain stage functions, nothing else."""
