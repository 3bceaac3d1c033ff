"""A tiny LongMemEval file in the official format, and one run of `mnemoflow eval longmemeval` on it
(with its RRF baseline and the HTML page) that the harness and the page tests share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoflow.cli import main


def _turn(role: str, content: str, has_answer: bool = False) -> dict:
    return {"role": role, "content": content, "has_answer": has_answer}


def _question(question_id: str, question_type: str, question: str, answer: str, sessions: list[tuple[str, str, list]],
              answer_ids: list[str]) -> dict:
    return {"question_id": question_id, "question_type": question_type, "question": question, "answer": answer,
            "question_date": "2023/06/10 (Sat) 10:00", "haystack_session_ids": [s[0] for s in sessions],
            "haystack_dates": [s[1] for s in sessions], "haystack_sessions": [s[2] for s in sessions],
            "answer_session_ids": answer_ids}


RESIDENCY = [
    ("sharegpt_a1", "2023/04/20 (Thu) 19:02", [
        _turn("user", "Which trains go from Milan to Lake Como, and do I need to book ahead?"),
        _turn("assistant", "Regional trains leave Milano Centrale and Porta Garibaldi about every hour; "
                           "tickets are sold on the day and you validate them before boarding."),
    ]),
    ("answer_res_1", "2023/05/28 (Sun) 11:30", [
        _turn("user", "My sister Lena is starting her residency at a hospital in Toronto in July, "
                      "what should I get her as a present?", has_answer=True),
        _turn("assistant", "A good pair of clogs, an insulated coffee flask for night shifts, or a "
                           "subscription to a meal service would all be welcome in a first residency year."),
    ]),
]

LONGMEMEVAL = [
    _question("ku_followers", "knowledge-update", "How many followers does my fitness page have now?", "1,200", [
        ("answer_ku_1", "2023/05/02 (Tue) 09:15", [
            _turn("user", "My fitness page on Instagram hit 850 followers this week, any ideas for a giveaway?",
                  has_answer=True),
            _turn("assistant", "Congratulations! A giveaway of a training plan or a branded water bottle works well; "
                               "ask people to follow and tag a friend."),
        ]),
        ("ultrachat_77", "2023/05/10 (Wed) 18:40", [
            _turn("user", "Can you suggest a quick vegetarian dinner with chickpeas?"),
            _turn("assistant", "A chickpea and spinach curry with coconut milk takes twenty minutes and keeps "
                               "for three days in the fridge."),
        ]),
        ("answer_ku_2", "2023/06/01 (Thu) 08:05", [
            _turn("user", "Update on the fitness page: it is at 1,200 followers now, the squat reel went viral.",
                  has_answer=True),
            _turn("assistant", "That is a big jump; pin the reel to your profile and post a follow-up while "
                               "the attention lasts."),
        ]),
    ], ["answer_ku_1", "answer_ku_2"]),
    _question("ssu_residency", "single-session-user", "Where is my sister doing her residency?", "Toronto",
              RESIDENCY, ["answer_res_1"]),
    _question("ssu_residency_abs", "single-session-user", "Where is my brother doing his residency?",
              "You did not mention a brother's residency", RESIDENCY, []),
]


@pytest.fixture(scope="session")
def longmemeval_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("longmemeval") / "longmemeval.json"
    path.write_text(json.dumps(LONGMEMEVAL))
    return path


@pytest.fixture(scope="session")
def longmemeval_run(longmemeval_file: Path) -> tuple[dict, Path]:
    """`mnemoflow eval longmemeval` at budgets 32 and 512 with the RRF baseline: (report.json, the page)."""
    out = longmemeval_file.parent
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "longmemeval", "--data", str(longmemeval_file), "--budgets", "32,512", "--baselines", "rrf",
              "--out", str(out / "report.json"), "--html", str(out / "report.html")])
    assert exit_info.value.code == 0
    return json.loads((out / "report.json").read_text()), out / "report.html"
