"""The LoCoMo harness end to end on a small dataset written here: every figure recomputes from the report."""

import json
import math
from pathlib import Path

from mnemoflow.eval.locomo import run_locomo
from mnemoflow.eval.metrics import credited_turns, evidence_recall

TURNS = [
    ("conv-a", 1, "2023-03-01T10:00:00", "Ana", "I just started learning the cello at the community school."),
    ("conv-a", 1, "2023-03-01T10:00:00", "Bo", "That's great! Who is your teacher?"),
    ("conv-a", 1, "2023-03-01T10:00:00", "Ana", "Mrs. Okafor, she played in the Lagos orchestra."),
    ("conv-a", 2, "2023-04-12T18:30:00", "Bo", "I adopted a grey cat named Pixel last weekend."),
    ("conv-a", 2, "2023-04-12T18:30:00", "Ana", "Pixel is a perfect name for a programmer's cat."),
    ("conv-b", 1, "2023-05-02T09:00:00", "Cy", "We are moving to Tallinn in September for my new job."),
    ("conv-b", 1, "2023-05-02T09:00:00", "Di", "Will you miss the seaside in Porto?"),
    ("conv-b", 1, "2023-05-02T09:00:00", "Cy", "A lot, but Tallinn has a coast too."),
]
QUESTIONS = [
    ("conv-a", "q1", "Who teaches Ana the cello?", ["D1:3"], "single-hop", True),
    ("conv-a", "q2", "What is the name of Bo's cat?", ["D2:1"], "single-hop", True),
    ("conv-b", "q3", "Where is Cy moving and when?", ["D1:1"], "temporal", True),
    ("conv-b", "q4", "What is Cy's favourite dessert?", [], "adversarial", False),
]


def write_dataset(root: Path) -> Path:
    """The conversations and questions above as LoCoMo files in `root`."""
    counters: dict[tuple[str, int], int] = {}
    lines = []
    for conv, session, at, speaker, text in TURNS:
        counters[(conv, session)] = counters.get((conv, session), 0) + 1
        lines.append({"conversation_id": conv, "session": session, "session_date_time": at, "session_at": at,
                      "dia_id": f"D{session}:{counters[(conv, session)]}", "speaker": speaker, "text": text})
    (root / "conversations.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (root / "questions.jsonl").write_text("".join(
        json.dumps({"conversation_id": c, "question_id": q, "question": text, "answer": "-", "evidence": ev,
                    "category": cat, **({} if ok else {"answerable": False})}) + "\n"
        for c, q, text, ev, cat, ok in QUESTIONS))
    return root


def test_report_follows_the_protocol_and_recomputes(tmp_path: Path) -> None:
    report = run_locomo(write_dataset(tmp_path), budgets=[32, 512])
    assert report["config"]["questions"] == 3  # the unanswerable one is not asked
    assert set(report["budgets"]) == {"32", "512"}
    by_budget: dict[int, list[float]] = {}
    for q in report["questions"]:
        assert math.ceil(len(q["context"]) / 4) <= q["budget"]
        for item in q["items"]:
            assert set(item) == {"kind", "id", "text", "tokens", "cites"}
            assert item["text"] in q["context"]
        recomputed = evidence_recall(q["evidence"], credited_turns(q["items"]))
        assert recomputed == q["evidence_recall"]
        by_budget.setdefault(q["budget"], []).append(recomputed)
    for budget, values in by_budget.items():
        assert report["budgets"][str(budget)]["evidence_recall"] == round(sum(values) / len(values), 4)
    assert report["budgets"]["512"]["evidence_recall"] == 1.0  # tiny corpus: everything fits
    tight = [q for q in report["questions"] if q["budget"] == 32]
    assert all(len(q["items"]) <= 2 for q in tight)
