"""Quality checks (`mnemoflow maintain check`): Great Expectations suites over the tables, and the
structural checks no single table shows (the commit chain, the outbox, LanceDB against DuckDB).

`run_checks` reads the frames through the store, validates them in an ephemeral, in-memory Great
Expectations context (nothing written to disk, no analytics, offline), and returns one result per
expectation; the `check` job stores them in `quality_runs` and turns each failure into a problem
that names its rows.
"""

from mnemoflow.quality.runner import problems_of, run_checks

__all__ = ["problems_of", "run_checks"]
