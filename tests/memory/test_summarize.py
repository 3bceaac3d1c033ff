"""The summariser: extractive by maximal marginal relevance over real MiniLM vectors, and written by a
chat model (a loopback double) with the extractive summary standing in when the model fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta

import numpy as np
import pytest

from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.llm.chat import ChatClient
from mnemoflow.memory.summarize import Sentence, extract, mmr_order, summarize, tokens
from tests.llm_double import ChatDouble, Reply

START = datetime(2024, 3, 4, 9, 0)
RENOVATION = [
    "Priya is renovating the kitchen of her flat in Leeds",
    "Priya ordered oak cabinets for the new kitchen",
    "The kitchen renovation in Priya's flat should be finished by April",
    "Priya chose a dark green tile for the kitchen walls",
    "Priya's kitchen renovation is running over budget by 2,000 pounds",
    "Priya hired an electrician to rewire the kitchen",
]
OUTLIER = "Priya's nephew scored a goal at his school football match"
REPEAT = "Priya ordered oak cabinets for her new kitchen"


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def sentences(texts: list[str], salience: float = 0.5) -> list[Sentence]:
    return [Sentence(f"mem_{i}", t, salience, START + timedelta(hours=i)) for i, t in enumerate(texts)]


def test_extractive_summary_keeps_the_theme_drops_the_outlier_and_the_repeat(embedder: LocalEmbedder) -> None:
    group = sentences([*RENOVATION[:3], OUTLIER, REPEAT, *RENOVATION[3:]])
    vectors = embedder.embed([s.text for s in group])
    text, cited = extract("Monday, 4 March 2024", group, vectors, max_tokens=60)
    assert text.startswith("Monday, 4 March 2024: ") and tokens(text) <= 60
    shown = [s for s in group if s.text.rstrip(".") + "." in text]
    assert len(shown) >= 2
    assert OUTLIER not in text
    assert not (RENOVATION[1] in text and REPEAT in text)  # the same thing is never said twice
    assert [s.at for s in shown] == sorted(s.at for s in shown)  # shown in time order
    assert set(cited) == {s.id for s in group}  # every child is cited ...
    assert cited[:len(shown)] == [s.id for s in sorted(shown, key=lambda s: cited.index(s.id))]  # ... shown first
    assert cited.index("mem_3") >= len(shown)  # the outlier only after them


def test_mmr_picks_central_first_then_novel(embedder: LocalEmbedder) -> None:
    texts = [*RENOVATION, OUTLIER]
    vectors = embedder.embed(texts)
    order = mmr_order(vectors, np.full(len(texts), 0.5, dtype=np.float32))
    assert sorted(order) == list(range(len(texts)))
    assert order[0] != len(texts) - 1 and order.index(len(texts) - 1) >= 3  # the outlier is not central


def test_salience_breaks_a_tie_between_equally_central_sentences(embedder: LocalEmbedder) -> None:
    texts = ["Priya repainted the hallway on Saturday", "Priya repainted the hallway on Sunday"]
    vectors = embedder.embed(texts)
    low_then_high = mmr_order(vectors, np.array([0.1, 0.9], dtype=np.float32))
    high_then_low = mmr_order(vectors, np.array([0.9, 0.1], dtype=np.float32))
    assert low_then_high[0] == 1 and high_then_low[0] == 0


def test_a_tiny_budget_still_says_something_within_it(embedder: LocalEmbedder) -> None:
    group = sentences(RENOVATION)
    text, cited = extract("Kitchen", group, embedder.embed(RENOVATION), max_tokens=16)
    assert tokens(text) <= 16 and text.startswith("Kitchen: ") and len(cited) == len(group)


@pytest.fixture
def chat(double: ChatDouble) -> Iterator[ChatClient]:
    client = ChatClient(base_url=double.base_url, model="chat-model", timeout_s=2.0, max_retries=1, backoff_s=0.01)
    yield client
    client.close()


def test_a_configured_model_writes_the_summary(double: ChatDouble, chat: ChatClient, embedder: LocalEmbedder) -> None:
    double.script(Reply(json.dumps({"summary": "Priya is renovating her Leeds kitchen with oak cabinets."})))
    group = sentences(RENOVATION)
    text, cited, method = summarize("March 2024", group, embedder.embed(RENOVATION), 96, chat=chat)
    assert (text, method) == ("March 2024: Priya is renovating her Leeds kitchen with oak cabinets.", "llm")
    assert set(cited) == {s.id for s in group}
    sent = double.requests[0]
    assert sent["response_format"]["json_schema"]["name"] == "summary" and sent["temperature"] == 0
    user = sent["messages"][1]["content"]
    assert "March 2024" in user and all(t in user for t in RENOVATION)


@pytest.mark.parametrize(("reply", "reason"), [
    (Reply(status=500), "HTTP 500 after 2 attempts"),
    (Reply('{"summary": "Priya'), "invalid JSON"),
    (Reply('{"summary": "   "}'), "schema violation at summary"),
    (Reply(json.dumps({"summary": "kitchen " * 200})), "over the budget of 96"),
])
def test_a_failed_model_leaves_the_extractive_summary(double: ChatDouble, chat: ChatClient, embedder: LocalEmbedder,
                                                      reply: Reply, reason: str) -> None:
    double.script(reply)
    group = sentences(RENOVATION)
    vectors = embedder.embed(RENOVATION)
    text, cited, method = summarize("March 2024", group, vectors, 96, chat=chat)
    assert (text, cited) == extract("March 2024", group, vectors, 96)
    assert method.startswith("extractive (llm-fallback: ") and reason in method
