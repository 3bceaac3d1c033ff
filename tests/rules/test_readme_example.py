"""The README's worked example (an agent loop that asks which tools it may use, then rates the
outcome) runs as written, on a fresh home, and does what the README says it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mnemoflow

README = Path(mnemoflow.__file__).resolve().parent.parent / "README.md"


def example() -> str:
    text = README.read_text()
    marker = text.index("<!-- agent-loop-example")
    return re.search(r"```python\n(.*?)```", text[marker:], flags=re.S).group(1)


def test_the_agent_loop_runs_as_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(example(), str(README), "exec"), {})  # noqa: S102  (the README's own code)
    said = capsys.readouterr().out.splitlines()
    research, arithmetic = said[0], said[1]
    assert research.startswith("DuckDB release notes -> web_search ->") and "None" in research
    assert arithmetic.startswith("add 19 and 23 -> ") and "selected=['calculator']" in arithmetic
    records = said[2:]
    assert len(records) == 2 and all("evaluations=1" in r and "positive=1" in r for r in records)
    assert "active" in records[0] and "applications=1" in records[0]
    assert "shadow" in records[1] and "applications=0" in records[1]
