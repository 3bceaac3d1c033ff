"""Connectors: dlt sources that land raw data in DuckDB `raw_*` schemas."""
