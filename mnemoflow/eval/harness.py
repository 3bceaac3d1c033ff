"""A conversation benchmark through the production path: conversations connector -> turns -> chunks ->
memories -> embeddings -> recall, the same for LoCoMo and LongMemEval.

A benchmark is its conversations, one scope each (user_id = conversation_id under the suite's tenant),
as rows of LoCoMo's JSONL shape (conversation_id, session, session_at, dia_id, speaker, text, optional
role and image_caption), and its questions (question_id, conversation_id, question, evidence dia_ids,
category, optional answer_sessions). Every question is asked at every budget; the report holds each
packed context and its items with their cited dia_ids, so every figure recomputes from it alone.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import Progress

from mnemoflow import __version__
from mnemoflow.config import load_settings
from mnemoflow.eval.baselines import BASELINES
from mnemoflow.eval.metrics import (
    credited_sessions,
    credited_turns,
    evidence_recall,
    summarize,
)
from mnemoflow.recall import RecallConfig
from mnemoflow.recall import preset as recall_preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.tokens import token_count

Rows = list[dict[str, Any]]
CREDITING_RULE = "an item credits at most max(1, tokens // 20) of its cites"


@dataclass(frozen=True)
class Benchmark:
    """What one run asks: the suite's name and tenant, the conversations by id, the questions, and what
    the loader left out and why (`skipped`, reported in the config)."""

    suite: str
    tenant: str
    data: Path
    conversations: dict[str, Rows]
    questions: Rows
    skipped: dict[str, int] = field(default_factory=dict)


def parse_budgets(text: str) -> list[int]:
    try:
        budgets = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated integers, e.g. 512,2048; got {text!r}") from None
    if not budgets or any(b < 16 for b in budgets):
        raise ValueError(f"--budgets must name at least one budget, each >= 16 tokens; got {text!r}")
    return budgets


def to_transcript(rows: Rows) -> Rows:
    """Benchmark turns in the transcript format (DESIGN.md): session_id = conversation + session,
    turn_id = dia_id, ts = session_at; the role where the data has one; a shared photo's caption
    travels as metadata."""
    turns = []
    for row in rows:
        turn = {
            "session_id": f"{row['conversation_id']}/session-{row['session']}",
            "turn_id": row["dia_id"],
            "speaker": row["speaker"],
            "ts": row["session_at"],
            "text": row["text"],
        }
        if row.get("role"):
            turn["role"] = row["role"]
        if row.get("image_caption"):
            turn["metadata"] = {"image_caption": row["image_caption"]}
        turns.append(turn)
    return turns


def item_cites(item: Any) -> list[str]:
    return [c.turn_id for c in item.citations if c.turn_id]


def ask(service: MemoryService, tenant: str, questions: Rows, budgets: list[int], config: RecallConfig,
        progress: Progress | None = None) -> tuple[Rows, Rows]:
    """Every question at every budget against the store as it is: (per-answer results, report records).
    A question with `answer_sessions` also gets session recall: the share of them that the context
    credits a turn of."""
    ask_task = progress.add_task(f"asking questions ({config.name})", total=len(questions) * len(budgets)
                                 ) if progress else None
    service.recall(Scope(tenant, questions[0]["conversation_id"]), "warm-up", token_budget=budgets[0], config=config)
    results: Rows = []
    records: Rows = []
    for q in questions:
        scope = Scope(tenant, q["conversation_id"])
        for budget in budgets:
            t0 = time.perf_counter()
            result = service.recall(scope, q["question"], token_budget=budget, config=config)
            latency_ms = (time.perf_counter() - t0) * 1000
            items = [{"kind": i.kind, "id": i.id, "text": i.text, "tokens": i.tokens, "cites": item_cites(i)}
                     for i in result.items]
            assert token_count(result.context) <= budget
            credited = credited_turns(items)
            figures = {"evidence_recall": evidence_recall(q["evidence"], credited)}
            if "answer_sessions" in q:
                figures["session_recall"] = evidence_recall(q["answer_sessions"], credited_sessions(credited))
            results.append({"question_id": q["question_id"], "budget": budget, "category": q["category"],
                            **figures, "latency_ms": latency_ms, "context_tokens": result.tokens})
            records.append({"question_id": q["question_id"], "conversation_id": q["conversation_id"],
                            "category": q["category"], "question": q["question"], "evidence": q["evidence"],
                            **({"answer_sessions": q["answer_sessions"]} if "answer_sessions" in q else {}),
                            "budget": budget, **figures, "latency_ms": round(latency_ms, 2),
                            "context_tokens": result.tokens, "context": result.context, "items": items})
            if progress:
                progress.advance(ask_task)  # type: ignore[arg-type]
    return results, records


def ingest(service: MemoryService, benchmark: Benchmark, scratch: Path, progress: Progress | None = None
           ) -> dict[str, Any]:
    """Each conversation into its own scope as a transcript file, through `MemoryService.ingest`:
    turns, chunks, tokens (`tokens.token_count`) and seconds."""
    task = progress.add_task("ingesting conversations", total=len(benchmark.conversations)) if progress else None
    stats: dict[str, Any] = {"turns": 0, "chunks": 0, "tokens": 0}
    started = time.perf_counter()
    for conversation_id, rows in benchmark.conversations.items():
        path = scratch / f"{conversation_id}.jsonl"
        path.write_text("".join(json.dumps(t) + "\n" for t in to_transcript(rows)))
        outcome = service.ingest(Scope(benchmark.tenant, conversation_id), [path])
        stats["turns"] += outcome.report.turns_added
        stats["chunks"] += outcome.report.chunks_added
        stats["tokens"] += sum(token_count(row["text"]) for row in rows)
        if progress:
            progress.advance(task)  # type: ignore[arg-type]
    stats["seconds"] = round(time.perf_counter() - started, 1)
    return stats


Extra = Callable[[MemoryService, RecallConfig], dict[str, Any]]


def run_presets(
    benchmark: Benchmark,
    *,
    budgets: list[int],
    presets: list[RecallConfig],
    home: Path | None = None,
    progress: Progress | None = None,
    settings_overrides: dict[str, Any] | None = None,
    maintain: tuple[str, ...] = (),
    extra: Extra | None = None,
) -> dict[str, dict[str, Any]]:
    """One store (one ingest, then the maintenance jobs `maintain` names, in order), every preset asked
    on it: a report per preset name, each complete on its own. `settings_overrides` changes how the
    store is built (the baselines' single turns); `extra` adds suite-specific keys to each report."""
    with tempfile.TemporaryDirectory(prefix=f"mnemoflow-{benchmark.suite}-") as scratch:
        settings = load_settings(home, **(settings_overrides or {})) if home else \
            load_settings().scratch(Path(scratch) / "home", **(settings_overrides or {}))
        with MemoryService(settings) as service:
            ingest_stats = ingest(service, benchmark, Path(scratch), progress)
            jobs: dict[str, Any] = {}
            for name in maintain:
                started = time.perf_counter()
                job = service.maintain(name, tenant_id=benchmark.tenant)
                jobs[name] = {"counts": job.counts, "seconds": round(time.perf_counter() - started, 1)}
            reports = {}
            for config in presets:
                results, records = ask(service, benchmark.tenant, benchmark.questions, budgets, config, progress)
                reports[config.name] = {
                    "config": {
                        "suite": benchmark.suite, "mnemoflow": __version__, "data": str(benchmark.data),
                        "preset": config.model_dump(), "embedding_model": settings.resolved_embedding_model,
                        "conversations": list(benchmark.conversations),
                        "store": {"bm25_engine": settings.bm25_engine, "chat_context": settings.chat_context,
                                  "chat_captions": settings.chat_captions,
                                  "generate_memories": settings.generate_memories},
                        "questions": len(benchmark.questions), "skipped": benchmark.skipped,
                        "budgets": budgets, "budget_rule": "ceil(chars / 4)", "crediting_rule": CREDITING_RULE,
                        "ingest": ingest_stats, "maintain": jobs,
                    },
                    "budgets": summarize(results),
                    "questions": records,
                }
                if extra:
                    reports[config.name].update(extra(service, config))
    return reports


def run_with_baselines(
    benchmark: Benchmark,
    *,
    budgets: list[int],
    preset: str | RecallConfig = "default",
    baselines: Sequence[str] = (),
    home: Path | None = None,
    progress: Progress | None = None,
    maintain: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The product's run (its own store, in `home` if given) and, beside it under "baselines", each
    baseline named (`BASELINES`) on a fresh store built the way that baseline asks; baselines that
    build the same store share it."""
    config = preset if isinstance(preset, RecallConfig) else recall_preset(preset)
    report = run_presets(benchmark, budgets=budgets, presets=[config], home=home, progress=progress,
                         maintain=maintain)[config.name]
    by_store: dict[str, list[str]] = {}
    for name in baselines:
        by_store.setdefault(json.dumps(BASELINES[name].settings, sort_keys=True), []).append(name)
    report["baselines"] = {}
    for names in by_store.values():
        runs = run_presets(benchmark, budgets=budgets, presets=[BASELINES[n].recall for n in names],
                           progress=progress, settings_overrides=BASELINES[names[0]].settings)
        report["baselines"].update({name: runs[BASELINES[name].recall.name] for name in names})
    return report
