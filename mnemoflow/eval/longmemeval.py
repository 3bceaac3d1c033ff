"""LongMemEval (Wu et al., ICLR 2025) through the production path, read from its official JSON files.

Each question brings its own haystack of timestamped user-assistant sessions; it becomes one scope
(user_id = "lme-" + question_id under one tenant) and the benchmark's rows in LoCoMo's shape: session k
of the haystack (1-based) is "S<k>", its turn j "S<k>:<j>", every turn at the session's date. The
evidence is the turns marked `has_answer`; the answer sessions are `answer_session_ids` as "S<k>".
Abstention questions (`_abs`) have nothing to find and are skipped, as are questions with no answer
turn in their haystack. The figures: evidence-turn recall and answer-session recall per budget and
question type, crediting as for LoCoMo (`metrics`).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from mnemoflow.errors import BadInputError
from mnemoflow.eval.harness import Benchmark, Rows

TENANT = "longmemeval"
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # "2023/05/25 (Thu) 05:26"


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: str
    has_answer: bool = False


class Question(BaseModel):
    """One question of the official files, with its haystack."""

    model_config = ConfigDict(extra="ignore")

    question_id: str
    question_type: str
    question: str
    answer: Any
    question_date: str
    haystack_session_ids: list[str]
    haystack_dates: list[str]
    haystack_sessions: list[list[Turn]]
    answer_session_ids: list[str]

    @field_validator("haystack_dates")
    @classmethod
    def _dates(cls, dates: list[str]) -> list[str]:
        for date in dates:
            datetime.strptime(date, DATE_FORMAT)
        return dates

    @model_validator(mode="after")
    def _aligned(self) -> Question:
        lengths = {len(self.haystack_session_ids), len(self.haystack_dates), len(self.haystack_sessions)}
        if len(lengths) != 1:
            raise ValueError("haystack_session_ids, haystack_dates and haystack_sessions differ in length")
        return self

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith("_abs")


QUESTIONS = TypeAdapter(list[Question])


def read_questions(path: Path) -> list[Question]:
    """The file's questions, validated; a file that is not LongMemEval's format is refused with where
    and why (the first three problems)."""
    try:
        return QUESTIONS.validate_json(path.read_bytes())
    except ValidationError as exc:
        problems = "; ".join(": ".join(filter(None, (".".join(str(p) for p in e["loc"]), e["msg"])))
                             for e in exc.errors()[:3])
        more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
        raise BadInputError(f"{path}: not in LongMemEval's format: {problems}{more}") from None


def to_rows(question: Question) -> tuple[Rows, dict[str, Any]]:
    """The haystack as benchmark rows and the question as a benchmark question."""
    conversation_id = f"lme-{question.question_id}"
    rows: Rows = []
    evidence = []
    for k, (date, session) in enumerate(zip(question.haystack_dates, question.haystack_sessions, strict=True), 1):
        at = datetime.strptime(date, DATE_FORMAT).isoformat()
        for j, turn in enumerate(session, 1):
            dia_id = f"S{k}:{j}"
            rows.append({"conversation_id": conversation_id, "session": k, "session_at": at, "dia_id": dia_id,
                         "speaker": turn.role, "role": turn.role, "text": turn.content})
            if turn.has_answer:
                evidence.append(dia_id)
    answers = set(question.answer_session_ids)
    asked = {"conversation_id": conversation_id, "question_id": conversation_id, "question": question.question,
             "evidence": evidence,
             "answer_sessions": [f"S{k}" for k, sid in enumerate(question.haystack_session_ids, 1) if sid in answers],
             "category": question.question_type}
    return rows, asked


def longmemeval_benchmark(path: Path, limit: int | None = None) -> Benchmark:
    """The first `limit` questions that have something to find, each with its haystack."""
    conversations: dict[str, Rows] = {}
    questions: Rows = []
    skipped: Counter[str] = Counter()
    for question in read_questions(path):
        if question.abstention:
            skipped["abstention"] += 1
            continue
        rows, asked = to_rows(question)
        if not asked["evidence"]:
            skipped["no_answer_turn"] += 1
            continue
        if limit is not None and len(questions) >= limit:
            skipped["over_limit"] += 1
            continue
        if absent := len(set(question.answer_session_ids) - set(question.haystack_session_ids)):
            skipped["answer_sessions_not_in_haystack"] += absent
        conversations[asked["conversation_id"]] = rows
        questions.append(asked)
    if not questions:
        raise BadInputError(f"{path}: no question to ask (skipped: {dict(skipped) or 'none'})")
    return Benchmark("longmemeval", TENANT, path, conversations, questions, skipped=dict(skipped))
