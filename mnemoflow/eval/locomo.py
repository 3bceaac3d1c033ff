"""LoCoMo through the production path (`harness`): its conversations, one user per conversation
(user_id = conversation_id) under one tenant, and every answerable question at every budget.
Also the broad "what did we talk about in May 2023?" questions that measure session coverage.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.progress import Progress

from mnemoflow.eval.harness import Benchmark, Rows, item_cites, run_presets
from mnemoflow.eval.metrics import credited_turns
from mnemoflow.recall import RecallConfig
from mnemoflow.recall import preset as recall_preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

TENANT = "locomo"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_questions(data_dir: Path, limit: int | None = None) -> tuple[dict[str, Rows], Rows]:
    """The conversations (first `limit` of them) and their answerable questions."""
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _read_jsonl(data_dir / "conversations.jsonl"):
        conversations[row["conversation_id"]].append(row)
    chosen = list(conversations)[:limit] if limit else list(conversations)
    questions = [q for q in _read_jsonl(data_dir / "questions.jsonl")
                 if q["conversation_id"] in chosen and q.get("answerable", True) is not False]
    return {c: conversations[c] for c in chosen}, questions


def overview_questions(conversations: dict[str, Rows]) -> Rows:
    """One broad question per conversation and month it has sessions in, "What did we talk about in
    May 2023?", its evidence those sessions. Not LoCoMo's: a template, the same for every month."""
    questions = []
    for conversation_id, rows in conversations.items():
        months: dict[tuple[int, int], set[int]] = defaultdict(set)
        for row in rows:
            at = datetime.fromisoformat(row["session_at"])
            months[(at.year, at.month)].add(row["session"])
        for (year, month), sessions in sorted(months.items()):
            questions.append({"conversation_id": conversation_id,
                              "question_id": f"{conversation_id}-{year}-{month:02d}",
                              "question": f"What did we talk about in {datetime(year, month, 1):%B %Y}?",
                              "sessions": sorted(sessions)})
    return questions


def ask_overviews(service: MemoryService, questions: Rows, budgets: list[int], config: RecallConfig) -> dict[str, Any]:
    """Session coverage of broad questions: the share of the month's sessions that the packed context
    credits at least one turn of (crediting as for evidence recall: max(1, tokens // 20) cites per item)."""
    records = []
    for q in questions:
        scope = Scope(TENANT, q["conversation_id"])
        for budget in budgets:
            result = service.recall(scope, q["question"], token_budget=budget, config=config)
            items = [{"kind": i.kind, "id": i.id, "tokens": i.tokens, "cites": item_cites(i)} for i in result.items]
            sessions = {int(dia.split(":")[0].lstrip("D")) for dia in credited_turns(items) if dia.startswith("D")}
            records.append({"question_id": q["question_id"], "question": q["question"], "budget": budget,
                            "sessions": q["sessions"], "covered": sorted(sessions & set(q["sessions"])),
                            "coverage": len(sessions & set(q["sessions"])) / len(q["sessions"]), "items": items})
    summary = {str(b): round(sum(r["coverage"] for r in records if r["budget"] == b)
                             / max(1, sum(r["budget"] == b for r in records)), 4) for b in budgets}
    return {"session_coverage": summary, "questions": records}


def locomo_benchmark(data_dir: Path, limit: int | None = None) -> Benchmark:
    """The first `limit` conversations of `data_dir` and their answerable questions."""
    conversations, questions = load_questions(data_dir, limit)
    asked = sum(q["conversation_id"] in conversations for q in _read_jsonl(data_dir / "questions.jsonl"))
    return Benchmark("locomo", TENANT, data_dir, conversations, questions,
                     skipped={"unanswerable": asked - len(questions)})


def run_locomo(
    data_dir: Path,
    *,
    budgets: list[int],
    preset: str | RecallConfig = "default",
    home: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    settings_overrides: dict[str, Any] | None = None,
    maintain: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Ingest, ask every answerable question at every budget, and return report.json's content.

    `settings_overrides` changes how the store is built (e.g. chat_context="none" for a
    single-turn baseline); the default is the product's own configuration. `maintain` names
    maintenance jobs run after the ingest, in order (e.g. cluster, seal, profiles)."""
    config = preset if isinstance(preset, RecallConfig) else recall_preset(preset)
    return run_locomo_presets(data_dir, budgets=budgets, presets=[config], home=home, limit=limit, progress=progress,
                              settings_overrides=settings_overrides, maintain=maintain)[config.name]


def run_locomo_presets(
    data_dir: Path,
    *,
    budgets: list[int],
    presets: list[RecallConfig],
    home: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    settings_overrides: dict[str, Any] | None = None,
    maintain: tuple[str, ...] = (),
    overviews: bool = False,
) -> dict[str, dict[str, Any]]:
    """`run_locomo` for several recall presets on one store (one ingest, one maintenance run): a
    report per preset name, each complete on its own. `overviews` adds the session coverage of one
    broad question per conversation and month (`overview_questions`) under "overviews"."""
    benchmark = locomo_benchmark(data_dir, limit)

    def with_overviews(service: MemoryService, config: RecallConfig) -> dict[str, Any]:
        return {"overviews": ask_overviews(service, overview_questions(benchmark.conversations), budgets, config)}

    return run_presets(benchmark, budgets=budgets, presets=presets, home=home, progress=progress,
                       settings_overrides=settings_overrides, maintain=maintain,
                       extra=with_overviews if overviews else None)
