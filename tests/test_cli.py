"""The CLI as a user meets it: exit codes, one-line errors, the --json contract."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoflow.cli import main
from tests.conftest import turn, write_transcript


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


@pytest.mark.parametrize("args", [
    ["recall", "x", "--budget", "abc"],
    ["recall", "x", "--budget", "3"],
    ["recall", "x", "--preset", "nope"],
    ["recall", "   "],
    ["recall"],
    ["nope"],
    ["add", "hello", "--tenant", "bad tenant"],
    ["add", "hello", "--kind", "opinion"],
    ["add", "hello", "--user", ""],  # an unset variable in a script: not the default user
    ["search", "jazz", "--tenant="],
    ["get", ""],
    ["eval", "locomo", "--data", "/nonexistent"],
    ["eval", "locomo", "--data", ".", "--budgets", "512,lots"],
    ["eval", "locomo", "--data", ".", "--baselines", "bm26"],
    ["eval", "longmemeval", "--data", "/nonexistent.json"],
    ["eval", "longmemeval", "--data", "pyproject.toml"],
    ["eval", "longmemeval", "--data", "pyproject.toml", "--html", "/nonexistent/dir/report.html"],
    ["eval", "scenarios", "--out", "/nonexistent/dir/report.json"],
    ["eval", "scenarios", "--html", "/nonexistent/dir/report.html"],
    ["eval", "scenarios", "--half", "held-out"],
    ["eval", "documents", "--data", "/nonexistent"],
    ["eval", "documents", "--budgets", "256,lots"],
    ["eval", "documents", "--baselines", "bm26"],
    ["deployments", "--write", "/nonexistent/dir/prefect.yaml"],
])
def test_wrong_arguments_get_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mnemoflow: ")
    assert "Traceback" not in err


def test_a_cluster_server_that_does_not_answer_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`server` names a cluster's servers: none answering is a configured endpoint out of reach (exit
    2, as an unreachable store is); no token for them is a setting missing (exit 1). Nothing is opened
    in the home either way."""
    from mnemoflow.cluster.processes import free_port

    monkeypatch.setenv("MNEMOFLOW_SERVER", f"http://127.0.0.1:{free_port()}, http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("MNEMOFLOW_SERVER_TOKEN", "not-a-token")
    home = tmp_path / "home"
    code, _, err = run(capsys, "recall", "anything", "--home", str(home))
    assert code == 2 and err.count("\n") == 1 and "no server answered at http://127.0.0.1:" in err, err
    monkeypatch.delenv("MNEMOFLOW_SERVER_TOKEN")
    code, _, err = run(capsys, "add", "Alex sails on Sundays", "--home", str(home))
    assert code == 1 and err.count("\n") == 1 and "server_token is not" in err, err
    assert not (home / "mnemoflow.duckdb").exists()


def test_add_recall_json_forget(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    code, out, _ = run(capsys, "add", "Ines prefers green tea", "--home", home, "--user", "ines")
    assert code == 0 and out.startswith("added mem_") and "preference" in out
    memory_id = out.split()[1]
    code, out, _ = run(capsys, "add", "Ines  prefers green tea", "--home", home, "--user", "ines")
    assert out.startswith(f"already stored {memory_id}")

    code, out, _ = run(capsys, "recall", "what does Ines drink", "--home", home, "--user", "ines", "--json")
    payload = json.loads(out)
    assert set(payload) >= {"items", "tokens"}
    item = payload["items"][0]
    assert set(item) == {"kind", "id", "text", "tokens", "scores", "why", "citations"}
    assert item["id"] == memory_id and item["citations"][0]["memory_id"] == memory_id

    code, out, _ = run(capsys, "recall", "what does Ines drink", "--home", home, "--user", "someone-else", "--json")
    assert json.loads(out)["items"] == []

    code, out, _ = run(capsys, "search", "green tea", "--home", home, "--user", "ines", "--json")
    assert code == 0 and [(r["id"], r["memory"]) for r in json.loads(out)["results"]] == [
        (memory_id, "Ines prefers green tea")]
    code, out, _ = run(capsys, "get", memory_id, "--home", home, "--user", "ines", "--json")
    assert code == 0 and json.loads(out)["content"] == "Ines prefers green tea"
    code, _, err = run(capsys, "get", memory_id, "--home", home, "--user", "ines", "--agent", "planner")
    assert code == 1 and err.startswith("mnemoflow: no memory")  # the planner's memories of Ines: not this one

    assert run(capsys, "forget", memory_id, "--home", home, "--user", "someone-else")[0] == 1
    assert run(capsys, "forget", memory_id, "--home", home, "--user", "ines")[0] == 0
    code, _, err = run(capsys, "history", memory_id, "--home", home, "--user", "ines")
    assert code == 1 and err.startswith("mnemoflow: no memory")  # deletion means gone, its history too
    assert run(capsys, "verify", "--home", home)[0] == 0


def test_add_at_keeps_when_it_was_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    code, out, _ = run(capsys, "add", "My passport expires next month", "--at", "2025-11-20", "--home", home)
    assert code == 0 and out.startswith("added mem_") and "December 2025" in out, out
    code, out, _ = run(capsys, "get", out.split()[1], "--home", home, "--json")
    assert json.loads(out)["observed_at"].startswith("2025-11-20")
    code, out, _ = run(capsys, "add", "Ines keeps bees", "--no-infer", "--at", "2024-05-01T08:30Z", "--home", home)
    assert out.rstrip().endswith("): Ines keeps bees"), out  # what was stored, as with --infer
    bees = out.split()[1]
    code, out, _ = run(capsys, "get", bees, "--home", home, "--json")
    assert json.loads(out)["observed_at"].startswith("2024-05-01T08:30")
    code, out, _ = run(capsys, "history", bees, "--home", home)
    assert out.rstrip().endswith("ADD: Ines keeps bees"), out  # each commit with the text it wrote
    code, out, _ = run(capsys, "history", bees, "--home", home, "--json")
    assert [(e["event"], e["new_memory"]) for e in json.loads(out)] == [("ADD", "Ines keeps bees")]
    code, out, _ = run(capsys, "add", "thanks so much!", "--home", home)
    assert code == 0 and out.startswith("nothing to remember: small talk"), out
    code, _, err = run(capsys, "add", "Ines rows", "--at", "last week", "--home", home)
    assert code == 2 and err.count("\n") == 1 and "--at must be an ISO date or time" in err, err


def test_ingest_exit_code_reports_partial_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    chat = write_transcript(tmp_path / "chat.jsonl", [turn("s", "1", "Lu", "2024-01-01T00:00:00Z", "Lu plays the cello.")])
    home = str(tmp_path / "h")
    code, out, err = run(capsys, "ingest", str(chat), "--home", home)
    assert code == 0 and "1 turns" in out
    code, out, err = run(capsys, "ingest", str(chat), str(tmp_path / "missing.md"), "--home", home)
    assert code == 1 and "missing.md: no such file or directory" in err
    assert err.startswith("skipped "), err  # one line each: no empty line left by the progress display


def test_ingest_help_names_every_kind_the_extractors_read(capsys: pytest.CaptureFixture[str]) -> None:
    from mnemoflow.extractors.registry import supported_kinds

    code, out, _ = run(capsys, "ingest", "--help")
    said = " ".join(out.split())
    assert code == 0 and all(suffix in said.split() or f"{suffix}," in said.split() or f"{suffix}." in said.split()
                             for suffixes in supported_kinds().values() for suffix in suffixes)
    assert {".pdf", ".docx", ".wav", ".py", ".eml"} <= {s for suffixes in supported_kinds().values() for s in suffixes}


def test_console_script_runs_the_demo(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "mnemoflow"
    done = subprocess.run([str(exe), "demo", "--home", str(tmp_path / "demo")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Lisbon" in done.stdout and "cites:" in done.stdout
    assert f"--tenant demo --user priya --home {tmp_path / 'demo'}" in done.stdout  # where to ask next
    # the sample is cited from its copy in the home, so another checkout's demo finds the same documents
    assert f"cites: {tmp_path / 'demo' / 'demo-sample'}" in done.stdout
    again = subprocess.run([str(exe), "demo", "--home", str(tmp_path / "demo")], capture_output=True, text=True,
                           timeout=300)
    assert "ingested: 0 documents changed" in again.stdout


@pytest.mark.parametrize(("locator", "shown"), [
    ({"page": 3, "part": 0}, "p. 3"),
    ({"heading_path": ["Handbook", "On-call"], "part": 1}, "Handbook > On-call"),
    ({"symbol": "Backoff.delay", "kind": "method", "lines": [10, 24], "language": "python"},
     "Backoff.delay, lines 10-24"),
    ({"start": 61.5, "end": 118.0, "segments": 9}, "01:01-01:58"),
    ({"start": 3700.0, "end": 3725.0}, "1:01:40-1:02:05"),
    ({"record": 4, "line": 5, "columns": ["a"]}, "record 4, line 5"),
    ({"resource": "tickets", "id": "18"}, "tickets 18"),
    ({"part": 0}, ""),
])
def test_citations_name_the_place_in_the_document(locator: dict, shown: str) -> None:
    from mnemoflow.cli import place_in_document

    assert place_in_document(locator) == shown


def test_eval_scenarios_reports_the_suite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "scenarios.json"
    code, out, err = run(capsys, "eval", "scenarios", "--limit", "2", "--out", str(report))
    assert code == 0, err
    assert "extraction" in out and "relationship" in out
    figures = json.loads(report.read_text())
    assert figures["scenarios_count"] == 2 and figures["engine"] == "rules"
    assert figures["cross_scope_links"] == 0 and figures["recall"]["out_of_scope_returned"] == 0
    assert set(figures["halves"]) == {"tune", "check"} and figures["config"]["half"] == "all"
    assert sum(h["scenarios_count"] for h in figures["halves"].values()) == 2


def test_eval_scenarios_runs_one_half(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "scenarios.json"
    code, out, err = run(capsys, "eval", "scenarios", "--half", "check", "--limit", "1", "--out", str(report))
    assert code == 0, err
    figures = json.loads(report.read_text())
    assert figures["scenarios_count"] == 1 and figures["config"]["half"] == "check"
    assert [s["half"] for s in figures["scenarios"]] == ["check"]
    assert figures["halves"]["check"]["scenarios_count"] == 1 and figures["halves"]["tune"]["scenarios_count"] == 0
    assert "check half" in out and "tune half" not in out


def test_the_review_hint_names_the_scope_it_was_ingested_into() -> None:
    from mnemoflow.cli import generation_line
    from mnemoflow.reports import GenerationDrainReport
    from mnemoflow.storage.scope import Scope

    report = GenerationDrainReport(turns=5, created=4, reviews=1, sessions=2)
    assert generation_line(report, Scope("brew", "omar")).endswith(
        "1 waiting for `mnemoflow review list --tenant brew --user omar`")
    assert generation_line(report).endswith("1 waiting for `mnemoflow review list`")  # a worker pass: many scopes
