"""Summarising a group of memories: extractive without an LLM, written by a chat model with one.

Extractive: the sentences (memory contents) are ranked by maximal marginal relevance (Carbonell and
Goldstein, 1998): relevance is how central a sentence is to the group (cosine similarity to the
mean of its vectors) scaled by its salience, and each pick is penalised by its similarity to what
was already picked, so a summary covers the group rather than repeating its densest part. The
best-ranked sentences that fit the token budget are shown in time order, under a title that names
what the summary is about and when ("Monday, 8 May 2023: ...").

With a chat model the group's sentences (or, for an L2, its L1 summaries) are handed to it with the
same title and budget; a request that fails, or an answer that does not fit, falls back to the
extractive summary. Either way citations list the memories in MMR order, so the first ones cited
are the ones that say most about the group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel

from mnemoflow.embedding.base import normalize
from mnemoflow.llm.chat import ChatClient, ChatFailed, Said

MMR_LAMBDA = 0.7  # relevance against novelty; the value MMR is usually run with
SALIENCE_WEIGHT = 0.5  # relevance x (1 + w * (salience - 0.5)): from 0.75x (salience 0) to 1.25x (salience 1)
SAME_SENTENCE = 0.9  # cosine similarity at which two sentences say the same thing: never both shown


@dataclass(frozen=True)
class Sentence:
    """One memory as a summary may show it."""

    id: str
    text: str
    salience: float
    at: datetime


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def mmr_order(vectors: np.ndarray, salience: np.ndarray) -> list[int]:
    """Every sentence's index, in the order maximal marginal relevance picks them."""
    n = len(vectors)
    if n == 0:
        return []
    vectors = normalize(vectors)
    centroid = normalize(vectors.mean(axis=0, keepdims=True))[0]
    relevance = (vectors @ centroid) * (1 + SALIENCE_WEIGHT * (np.clip(salience, 0.0, 1.0) - 0.5))
    similarity = vectors @ vectors.T
    redundancy = np.full(n, -1.0)
    left = np.ones(n, dtype=bool)
    order: list[int] = []
    for _ in range(n):
        score = np.where(left, MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * np.maximum(redundancy, 0.0), -np.inf)
        pick = int(np.argmax(score))
        order.append(pick)
        left[pick] = False
        redundancy = np.maximum(redundancy, similarity[pick])
    return order


def extract(title: str, sentences: list[Sentence], vectors: np.ndarray, max_tokens: int) -> tuple[str, list[str]]:
    """The extractive summary and the memory ids in citation order (those shown first, by rank)."""
    order = mmr_order(vectors, np.array([s.salience for s in sentences], dtype=np.float32))
    vectors = normalize(vectors) if len(sentences) else vectors
    budget = max_tokens * 4 - len(title) - 1
    shown: list[int] = []
    for i in order:
        line = _sentence(sentences[i].text)
        if len(line) + 1 > budget or any(float(vectors[i] @ vectors[j]) >= SAME_SENTENCE for j in shown):
            continue
        shown.append(i)
        budget -= len(line) + 1
    if not shown and order:  # not even the best sentence fits: show as much of it as does
        shown = [order[0]]
    timeline = sorted(shown, key=lambda i: (sentences[i].at, sentences[i].id))
    text = f"{title}: " + " ".join(_sentence(sentences[i].text) for i in timeline)
    cited = [sentences[i].id for i in shown] + [sentences[i].id for i in order if i not in set(shown)]
    return _clip(text, max_tokens), cited


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else text + "."


def _clip(text: str, max_tokens: int) -> str:
    limit = max_tokens * 4
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---------------------------------------------------------------------- written by a chat model
SYSTEM_PROMPT = """\
You summarise what a memory store holds about a period, a source or a topic, so an assistant can \
recall it later. Answer with JSON that matches the schema.
- summary: plain prose, third person, at most {words} words, covering the main points in time order.
- Use only what the notes say; keep names, dates, places, numbers and titles exactly as written.
- No greetings, no opinions, no advice, no speculation, no lists or markup."""

RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "summary",
        "strict": True,
        "schema": {"type": "object", "additionalProperties": False,
                   "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
    },
}


class _Answer(BaseModel):
    summary: Said


def written(chat: ChatClient, title: str, notes: list[str], max_tokens: int) -> str:
    """The model's summary of `notes` under `title`, within `max_tokens`; ChatFailed when the request
    fails or the answer does not fit the schema or the budget."""
    words = max(10, int((max_tokens * 4 - len(title) - 2) / 6))  # ~6 characters per English word and space
    user = f"Notes about {title}, oldest first:\n" + "\n".join(f"- {n}" for n in notes)
    summary = chat.complete_json(SYSTEM_PROMPT.format(words=words), user, RESPONSE_FORMAT, _Answer).summary
    text = f"{title}: {summary}"
    if tokens(text) > max_tokens:
        raise ChatFailed(f"summary of {tokens(text)} tokens, over the budget of {max_tokens}")
    return text


def summarize(
    title: str, sentences: list[Sentence], vectors: np.ndarray, max_tokens: int, *, chat: ChatClient | None = None,
    notes: list[str] | None = None,
) -> tuple[str, list[str], str]:
    """(text, memory ids in citation order, method). The chat model, when given, summarises `notes`
    (default: the sentences in time order); the extractive summary stands in when it fails."""
    text, cited = extract(title, sentences, vectors, max_tokens)
    if chat is None:
        return text, cited, "extractive"
    timeline = [s.text for s in sorted(sentences, key=lambda s: (s.at, s.id))]
    try:
        return written(chat, title, notes or timeline, max_tokens), cited, "llm"
    except ChatFailed as failure:
        return text, cited, f"extractive (llm-fallback: {failure})"
