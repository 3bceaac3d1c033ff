"""Answer-in-context over documents: a folder of documents ingested into one scope through the production
path, then each question asked at each budget; a question is answered when one of its answers appears
in the packed context (whitespace aside). Written for the Chinese, Japanese and Korean set in
`eval/cjk/` (`questions.jsonl`: question_id, language, document, question, answers), and run beside
the BM25-only and RRF baselines and the vector signal alone (how much the embedder adds), all on the
same store, so every figure recomputes from the report's records. A question's `half` (dev: the
questions the CJK handling was tuned on; check: written after, never tuned on) is reported apart.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from mnemoflow import __version__
from mnemoflow.config import load_settings
from mnemoflow.recall import RecallConfig, preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.tokens import token_count

SCOPE = Scope("eval-documents", "reader")
# the embedder alone, as the baselines are run (no rerank, no excerpts): what the vector signal finds
VECTOR_ONLY = preset("rrf").model_copy(update={"name": "vector", "signals": {"vector": 1.0}})


def load_questions(data: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data / "questions.jsonl").read_text().splitlines() if line.strip()]


def _flat(text: str) -> str:
    return " ".join(text.split())


def answered(context: str, answers: list[str]) -> bool:
    flat = _flat(context)
    return any(_flat(answer) in flat for answer in answers)


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_budget[r["budget"]].append(r)
    summary = {}
    for budget, rows in sorted(by_budget.items()):
        languages: dict[str, list[bool]] = defaultdict(list)
        halves: dict[str, list[bool]] = defaultdict(list)
        for r in rows:
            languages[r["language"]].append(r["answered"])
            halves[r.get("half") or "all"].append(r["answered"])
        summary[str(budget)] = {
            "answered": sum(r["answered"] for r in rows), "questions": len(rows),
            "answer_in_context": round(sum(r["answered"] for r in rows) / len(rows), 4),
            "by_language": {lang: f"{sum(hits)}/{len(hits)}" for lang, hits in sorted(languages.items())},
            "by_half": {half: f"{sum(hits)}/{len(hits)}" for half, hits in sorted(halves.items())},
        }
    return summary


def ask(service: MemoryService, questions: list[dict[str, Any]], budgets: list[int], config: RecallConfig
        ) -> list[dict[str, Any]]:
    records = []
    for q in questions:
        for budget in budgets:
            result = service.recall(SCOPE, q["question"], token_budget=budget, config=config)
            assert token_count(result.context) <= budget
            records.append({"question_id": q["question_id"], "language": q["language"], "half": q.get("half"),
                            "budget": budget,
                            "question": q["question"], "answers": q["answers"],
                            "answered": answered(result.context, q["answers"]), "context_tokens": result.tokens,
                            "context": result.context,
                            "items": [{"kind": i.kind, "text": i.text, "tokens": i.tokens,
                                       "cites": [c.title for c in i.citations]} for i in result.items]})
    return records


def run_documents(data: Path, budgets: list[int], *, baselines: list[str], home: Path | None = None,
                  settings_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The product's default recall and each named baseline ("bm25", "rrf", "vector") on one store."""
    questions = load_questions(data)
    configs = [preset("default"), *(VECTOR_ONLY if name == "vector" else preset(name) for name in baselines)]
    with tempfile.TemporaryDirectory(prefix="mnemoflow-documents-") as scratch:
        settings = load_settings(home, **(settings_overrides or {})) if home else \
            load_settings().scratch(Path(scratch) / "home", **(settings_overrides or {}))
        with MemoryService(settings) as service:
            started = time.perf_counter()
            outcome = service.ingest(SCOPE, [data / "docs"])
            ingest = {"documents": outcome.report.documents_changed, "chunks": outcome.report.chunks_added,
                      "errors": [e.reason for e in outcome.report.errors],
                      "seconds": round(time.perf_counter() - started, 1)}
            runs = {config.name: ask(service, questions, budgets, config) for config in configs}
    return {
        "config": {"suite": "documents", "mnemoflow": __version__, "data": str(data), "budgets": budgets,
                   "embedding_model": settings.resolved_embedding_model, "bm25_engine": settings.bm25_engine,
                   "chunk_max_tokens": settings.chunk_max_tokens, "questions": len(questions), "ingest": ingest,
                   "budget_rule": "tokens.token_count: ceil(chars / 4), a CJK character about a token",
                   "answered_rule": "an answer appears in the packed context, whitespace collapsed"},
        "runs": {name: {"budgets": _summary(records), "questions": records} for name, records in runs.items()},
    }
