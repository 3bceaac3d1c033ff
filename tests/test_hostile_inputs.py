"""Hostile inputs (issue 16, "the proof"): one `mnemoflow ingest` run over the small versions of
tests/hostile_inputs.py, beside a good file. Each refused input ends as exactly one `ingest_errors`
row whose reason says why; each valid one is ingested; the good file lands; the process ends.

The small versions keep each full case's mechanism (the check that refuses the full one refuses
them); bench/hostile_input.py runs the full sizes and measures peak memory and time.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb

from mnemoflow.config import load_settings
from tests.hostile_inputs import CASES

TENANT, USER = "acme", "alex"
GOOD = "# Harbour log\n\nThe saffron lighthouse keeper logs every ferry that passes Quillon Point.\n"


def ingest(folder: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from mnemoflow.cli import main; main()", "ingest", str(folder), "--home", str(home),
         "--tenant", TENANT, "--user", USER, "--no-wait"], capture_output=True, text=True, timeout=600)


def test_each_hostile_input_is_one_clear_error_or_ingested_and_the_run_goes_on(tmp_path: Path) -> None:
    folder = (tmp_path / "inputs").resolve()
    folder.mkdir()
    cases = [case for case in CASES if case.cheap]
    for case in cases:
        case.make(folder / case.name, True)
    (folder / "good.md").write_text(GOOD)

    run = ingest(folder, tmp_path / "home")

    assert run.returncode == 1, f"exit {run.returncode}\n{run.stderr[-3000:]}"  # 1: done, some input refused
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    with duckdb.connect(str(load_settings(home=tmp_path / "home").duckdb_path), read_only=True) as con:
        errors = con.execute("SELECT uri, reason FROM ingest_errors WHERE tenant_id = ?", [TENANT]).fetchall()
        chunks = dict(con.execute(
            "SELECT d.uri, count(c.chunk_id) FROM source_documents d JOIN chunks c ON c.document_id = d.document_id "
            "WHERE d.tenant_id = ? GROUP BY d.uri", [TENANT]).fetchall())
    reasons: dict[str, list[str]] = {}
    for uri, reason in errors:
        if "#attachment=" not in uri:
            reasons.setdefault(Path(uri.removeprefix("file://")).name, []).append(reason)

    problems = []
    for case in cases:
        uri = (folder / case.name).as_uri()
        got = reasons.get(case.name, [])
        if case.expect == "refused" and not (len(got) == 1 and re.search(case.reason, got[0]) and uri not in chunks):
            problems.append(f"{case.name}: expected one error matching {case.reason!r}, got {got}")
        if case.expect == "ingested" and (got or not chunks.get(uri)):
            problems.append(f"{case.name}: expected to be ingested, got errors {got}")
    assert not problems, "\n".join(problems)
    assert chunks.get((folder / "good.md").as_uri()), "the good file did not land"
    assert set(reasons) <= {case.name for case in cases}, sorted(set(reasons) - {c.name for c in cases})
