"""LoCoMo through the production path: conversations connector -> turns -> chunks -> embeddings -> recall.

One tenant, one user per conversation (user_id = conversation_id). Every answerable
question is asked at every budget; report.json holds each packed context and its
items with their cited dia_ids, so every figure can be recomputed from it alone.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.progress import Progress

from mnemoflow import __version__
from mnemoflow.config import load_settings
from mnemoflow.eval.metrics import credited_turns, evidence_recall, summarize
from mnemoflow.recall import RecallConfig, preset as recall_preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

TENANT = "locomo"


def parse_budgets(text: str) -> list[int]:
    try:
        budgets = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated integers, e.g. 512,2048; got {text!r}") from None
    if not budgets or any(b < 16 for b in budgets):
        raise ValueError(f"--budgets must name at least one budget, each >= 16 tokens; got {text!r}")
    return budgets


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def to_transcript(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """LoCoMo turns in the transcript format (DESIGN.md): session_id = conversation + session,
    turn_id = dia_id, ts = session_at; a shared photo's caption travels as metadata."""
    turns = []
    for row in rows:
        turn = {
            "session_id": f"{row['conversation_id']}/session-{row['session']}",
            "turn_id": row["dia_id"],
            "speaker": row["speaker"],
            "ts": row["session_at"],
            "text": row["text"],
        }
        if row.get("image_caption"):
            turn["metadata"] = {"image_caption": row["image_caption"]}
        turns.append(turn)
    return turns


def _item_cites(item: Any) -> list[str]:
    return [c.turn_id for c in item.citations if c.turn_id]


Rows = list[dict[str, Any]]


def load_questions(data_dir: Path, limit: int | None = None) -> tuple[dict[str, Rows], Rows]:
    """The conversations (first `limit` of them) and their answerable questions."""
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _read_jsonl(data_dir / "conversations.jsonl"):
        conversations[row["conversation_id"]].append(row)
    chosen = list(conversations)[:limit] if limit else list(conversations)
    questions = [q for q in _read_jsonl(data_dir / "questions.jsonl")
                 if q["conversation_id"] in chosen and q.get("answerable", True) is not False]
    return {c: conversations[c] for c in chosen}, questions


def ask(service: MemoryService, questions: list[dict[str, Any]], budgets: list[int], config: RecallConfig,
        progress: Progress | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every question at every budget against the store as it is: (per-answer results, report records)."""
    ask_task = progress.add_task(f"asking questions ({config.name})", total=len(questions) * len(budgets)
                                 ) if progress else None
    service.recall(Scope(TENANT, questions[0]["conversation_id"]), "warm-up", token_budget=budgets[0], config=config)
    results: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for q in questions:
        scope = Scope(TENANT, q["conversation_id"])
        for budget in budgets:
            t0 = time.perf_counter()
            result = service.recall(scope, q["question"], token_budget=budget, config=config)
            latency_ms = (time.perf_counter() - t0) * 1000
            items = [{"kind": i.kind, "id": i.id, "text": i.text, "tokens": i.tokens, "cites": _item_cites(i)}
                     for i in result.items]
            assert math.ceil(len(result.context) / 4) <= budget
            recall_value = evidence_recall(q["evidence"], credited_turns(items))
            results.append({"question_id": q["question_id"], "budget": budget, "category": q["category"],
                            "evidence_recall": recall_value, "latency_ms": latency_ms,
                            "context_tokens": result.tokens})
            records.append({"question_id": q["question_id"], "conversation_id": q["conversation_id"],
                            "category": q["category"], "question": q["question"], "evidence": q["evidence"],
                            "budget": budget, "evidence_recall": recall_value,
                            "latency_ms": round(latency_ms, 2), "context": result.context, "items": items})
            if progress:
                progress.advance(ask_task)  # type: ignore[arg-type]
    return results, records


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
            items = [{"kind": i.kind, "id": i.id, "tokens": i.tokens, "cites": _item_cites(i)} for i in result.items]
            sessions = {int(dia.split(":")[0].lstrip("D")) for dia in credited_turns(items) if dia.startswith("D")}
            records.append({"question_id": q["question_id"], "question": q["question"], "budget": budget,
                            "sessions": q["sessions"], "covered": sorted(sessions & set(q["sessions"])),
                            "coverage": len(sessions & set(q["sessions"])) / len(q["sessions"]), "items": items})
    summary = {str(b): round(sum(r["coverage"] for r in records if r["budget"] == b)
                             / max(1, sum(r["budget"] == b for r in records)), 4) for b in budgets}
    return {"session_coverage": summary, "questions": records}


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
    conversations, questions = load_questions(data_dir, limit)
    chosen = list(conversations)
    with tempfile.TemporaryDirectory(prefix="mnemoflow-locomo-") as scratch:
        settings = load_settings(home or Path(scratch) / "home", **(settings_overrides or {}))
        with MemoryService(settings) as service:
            ingest_task = progress.add_task("ingesting conversations", total=len(chosen)) if progress else None
            started = time.perf_counter()
            ingest_stats = {"turns": 0, "chunks": 0}
            for conversation_id in chosen:
                path = Path(scratch) / f"{conversation_id}.jsonl"
                path.write_text("".join(json.dumps(t) + "\n" for t in to_transcript(conversations[conversation_id])))
                outcome = service.ingest(Scope(TENANT, conversation_id), [path])
                ingest_stats["turns"] += outcome.report.turns_added
                ingest_stats["chunks"] += outcome.report.chunks_added
                if progress:
                    progress.advance(ingest_task)  # type: ignore[arg-type]
            ingest_seconds = time.perf_counter() - started
            jobs: dict[str, Any] = {}
            for name in maintain:
                started = time.perf_counter()
                job = service.maintain(name, tenant_id=TENANT)
                jobs[name] = {"counts": job.counts, "seconds": round(time.perf_counter() - started, 1)}
            reports = {}
            for config in presets:
                results, records = ask(service, questions, budgets, config, progress)
                reports[config.name] = {
                    "config": {
                        "suite": "locomo", "mnemoflow": __version__, "data": str(data_dir),
                        "preset": config.model_dump(), "embedding_model": settings.resolved_embedding_model,
                        "conversations": chosen,
                        "store": {"bm25_engine": settings.bm25_engine, "chat_context": settings.chat_context,
                                  "chat_captions": settings.chat_captions},
                        "questions": len(questions), "budgets": budgets, "budget_rule": "ceil(chars / 4)",
                        "crediting_rule": "an item credits at most max(1, tokens // 20) of its cites",
                        "ingest": {**ingest_stats, "seconds": round(ingest_seconds, 1)}, "maintain": jobs,
                    },
                    "budgets": summarize(results),
                    "questions": records,
                }
                if overviews:
                    reports[config.name]["overviews"] = ask_overviews(service, overview_questions(conversations),
                                                                      budgets, config)
    return reports
