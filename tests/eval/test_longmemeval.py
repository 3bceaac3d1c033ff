"""LongMemEval from its official JSON format through the production path, beside the RRF baseline."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.eval.longmemeval import longmemeval_benchmark
from mnemoflow.eval.metrics import credited_sessions, credited_turns, evidence_recall
from tests.eval.conftest import LONGMEMEVAL


def test_each_question_is_one_scope_of_numbered_sessions(longmemeval_file: Path) -> None:
    benchmark = longmemeval_benchmark(longmemeval_file)
    assert benchmark.skipped == {"abstention": 1}
    assert [q["question_id"] for q in benchmark.questions] == ["lme-ku_followers", "lme-ssu_residency"]
    followers = benchmark.questions[0]
    assert followers["evidence"] == ["S1:1", "S3:1"] and followers["answer_sessions"] == ["S1", "S3"]
    assert followers["category"] == "knowledge-update"
    rows = benchmark.conversations["lme-ku_followers"]
    assert [r["dia_id"] for r in rows] == ["S1:1", "S1:2", "S2:1", "S2:2", "S3:1", "S3:2"]
    assert rows[4] == {"conversation_id": "lme-ku_followers", "session": 3, "session_at": "2023-06-01T08:05:00",
                       "dia_id": "S3:1", "speaker": "user", "role": "user",
                       "text": LONGMEMEVAL[0]["haystack_sessions"][2][0]["content"]}
    assert benchmark.questions[1]["answer_sessions"] == ["S2"]
    assert longmemeval_benchmark(longmemeval_file, limit=1).skipped == {"abstention": 1, "over_limit": 1}


def _drop_field(data: list[dict[str, Any]]) -> None:
    del data[1]["haystack_dates"]


def _misalign(data: list[dict[str, Any]]) -> None:
    data[0]["haystack_dates"].pop()


def _bad_role(data: list[dict[str, Any]]) -> None:
    data[0]["haystack_sessions"][1][0]["role"] = "system"


def _bad_date(data: list[dict[str, Any]]) -> None:
    data[0]["haystack_dates"][0] = "May 2, 2023"


@pytest.mark.parametrize(("mutate", "where"), [
    (_drop_field, "1.haystack_dates"),
    (_misalign, "differ in length"),
    (_bad_role, "0.haystack_sessions.1.0.role"),
    (_bad_date, "0.haystack_dates"),
])
def test_a_file_not_in_the_format_is_refused_with_where(tmp_path: Path, mutate: Callable[[list], None],
                                                        where: str) -> None:
    data = copy.deepcopy(LONGMEMEVAL)
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BadInputError, match="not in LongMemEval's format") as error:
        longmemeval_benchmark(path)
    assert where in str(error.value)


@pytest.mark.parametrize("content", ["{\"questions\": []}", "[1, 2", json.dumps([LONGMEMEVAL[2]])])
def test_a_file_with_nothing_to_ask_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BadInputError, match=str(path)):
        longmemeval_benchmark(path)


def _check_recomputes(run: dict[str, Any]) -> None:
    by_key: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for q in run["questions"]:
        assert math.ceil(len(q["context"]) / 4) <= q["budget"]
        credited = credited_turns(q["items"])
        assert q["evidence_recall"] == evidence_recall(q["evidence"], credited)
        assert q["session_recall"] == evidence_recall(q["answer_sessions"], credited_sessions(credited))
        by_key.setdefault((q["budget"], q["category"]), []).append((q["evidence_recall"], q["session_recall"]))
    for (budget, category), values in by_key.items():
        figures = run["budgets"][str(budget)]["by_category"][category]
        assert figures["evidence_recall"] == round(sum(v[0] for v in values) / len(values), 4)
        assert figures["session_recall"] == round(sum(v[1] for v in values) / len(values), 4)


def test_the_report_recomputes_beside_its_baseline(longmemeval_run: tuple[dict, Path]) -> None:
    report, _ = longmemeval_run
    baseline = report["baselines"]["rrf"]
    assert report["config"]["suite"] == "longmemeval" and report["config"]["questions"] == 2
    assert report["config"]["skipped"] == {"abstention": 1}
    assert report["config"]["store"]["generate_memories"] is True
    assert baseline["config"]["preset"]["name"] == "rrf"
    assert baseline["config"]["store"] == {**baseline["config"]["store"], "chat_context": "none",
                                           "chat_captions": False, "generate_memories": False}
    for run in (report, baseline):
        _check_recomputes(run)
        assert {q["question_id"] for q in run["questions"]} == {"lme-ku_followers", "lme-ssu_residency"}
        assert set(run["budgets"]["512"]["by_category"]) == {"knowledge-update", "single-session-user"}
        assert run["budgets"]["512"]["evidence_recall"] == 1.0  # the whole haystack fits in 512 tokens
        assert run["config"]["ingest"]["turns"] == 10
    tight = [q for q in report["questions"] if q["budget"] == 32]
    assert all(sum(item["tokens"] for item in q["items"]) <= 32 for q in tight)
