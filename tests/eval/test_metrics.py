import pytest

from mnemoflow.eval.harness import parse_budgets, to_transcript
from mnemoflow.eval.metrics import (
    credited_sessions,
    credited_turns,
    evidence_recall,
    percentile,
    summarize,
)


def test_an_item_credits_at_most_tokens_over_20_of_its_cites() -> None:
    summary = {"cites": ["D1:1", "D1:2", "D1:3", "D1:4"], "tokens": 45}  # may credit 2
    short = {"cites": ["D2:1", "D2:2"], "tokens": 5}  # may credit 1
    assert credited_turns([summary, short]) == {"D1:1", "D1:2", "D2:1"}


def test_evidence_recall_counts_unknown_ids_as_missed() -> None:
    credited = {"D1:3", "D2:8"}
    assert evidence_recall(["D1:3", "D2:8"], credited) == 1.0
    assert evidence_recall(["D1:3", "D:11:26"], credited) == 0.5
    assert evidence_recall(["D1:3", "D1:3"], credited) == 1.0


def test_percentile_and_summary() -> None:
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95
    rows = [{"budget": 512, "category": c, "evidence_recall": r, "latency_ms": 10.0, "context_tokens": 500}
            for c, r in [("temporal", 1.0), ("temporal", 0.0), ("single-hop", 1.0)]]
    summary = summarize(rows)["512"]
    assert summary["evidence_recall"] == round(2 / 3, 4)
    assert summary["by_category"]["temporal"]["evidence_recall"] == 0.5
    assert "session_recall" not in summary  # LoCoMo has none


def test_session_recall_counts_sessions_with_a_credited_turn() -> None:
    credited = credited_turns([{"cites": ["S3:7", "S3:8", "S1:2"], "tokens": 30}])  # credits S3:7 only
    assert credited_sessions(credited) == {"S3"}
    assert evidence_recall(["S1", "S3"], credited_sessions(credited)) == 0.5
    rows = [{"budget": 512, "category": "multi-session", "evidence_recall": e, "session_recall": s,
             "latency_ms": 10.0, "context_tokens": 400} for e, s in [(0.5, 1.0), (0.0, 0.5)]]
    summary = summarize(rows)["512"]
    assert summary["session_recall"] == 0.75 and summary["by_category"]["multi-session"]["session_recall"] == 0.75


def test_locomo_rows_become_transcript_turns() -> None:
    row = {"conversation_id": "conv-1", "session": 2, "session_at": "2023-05-08T13:56:00", "dia_id": "D2:5",
           "speaker": "Ana", "text": "Look!", "image_caption": "a photo of a cake"}
    assert to_transcript([row]) == [{"session_id": "conv-1/session-2", "turn_id": "D2:5", "speaker": "Ana",
                                     "ts": "2023-05-08T13:56:00", "text": "Look!",
                                     "metadata": {"image_caption": "a photo of a cake"}}]


def test_budget_parsing() -> None:
    assert parse_budgets("512, 2048") == [512, 2048]
    for bad in ("", "lots", "8"):
        with pytest.raises(ValueError):
            parse_budgets(bad)
