"""Chinese, Japanese and Korean: counted as about a token a character, chunked at their own sentence
ends, found by a word inside a sentence (LanceDB's index by character pairs), answered within a small
budget; the English-only embedder stays out of such a query, and the rule engine makes no memory of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.chunking import SENTENCE_END, split_to_cap
from mnemoflow.eval.documents import answered
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.tokens import cjk_bigrams, cjk_query_text, token_count, units
from tests.conftest import turn, write_transcript

SCOPE = Scope("acme", "mei")
NOTES = {
    "garden.md": "# 花园\n\n我家的樱桃树每年四月开花。邻居李阿姨在院子里种了很多番茄和黄瓜。今年夏天雨水特别多，黄瓜长得很快。",
    "kitchen.md": "# 台所\n\n冷蔵庫の製氷機は先週から壊れています。修理の人は来週の水曜日の午後に来る予定です。それまでは氷を買ってください。",
    "car.md": "# 자동차\n\n우리 차의 엔진 오일은 지난달에 바꿨습니다. 다음 정비는 내년 삼월에 예약했습니다. 타이어 공기압은 매주 확인합니다.",
    "trip.md": "# Trip\n\nThe train to Leeds leaves at 9:40 from platform 3. Our hotel is the Dakota, near the station.",
}


def test_a_cjk_character_is_about_a_token_and_english_counts_as_before() -> None:
    assert token_count("a" * 40) == 10 and token_count("我们明天见") == 5 and token_count("会議は3時") == 5
    assert units("Tokyo 東京") == 6 + 8
    assert cjk_bigrams("来週の出張は大阪") == ["来週", "週の", "の出", "出張", "張は", "は大", "大阪"]
    assert cjk_query_text("When is 出張?") == "When is  出張 ?"


def test_sentences_end_at_cjk_full_stops_and_pieces_stay_under_the_cap() -> None:
    text = "今天开会。明天出差！后天呢？「好的。」他说。"
    assert [s for s in SENTENCE_END.split(text) if s] == ["今天开会。", "明天出差！", "后天呢？", "「好的。」", "他说。"]
    assert SENTENCE_END.split("회의는 월요일입니다. 장소는 본사입니다.") == ["회의는 월요일입니다.", "장소는 본사입니다."]
    pieces = split_to_cap("这是一个很长的句子。" * 200, 64)
    assert all(token_count(p) <= 64 for p in pieces) and len(pieces) > 25


@pytest.fixture
def notes(service: MemoryService, tmp_path: Path) -> MemoryService:
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text)
    outcome = service.ingest(SCOPE, [tmp_path / name for name in NOTES])
    assert outcome.report.errors == []
    return service


@pytest.mark.parametrize(("query", "answer"), [
    ("樱桃树什么时候开花？", "四月"),
    ("製氷機の修理はいつですか？", "水曜日"),
    ("다음 정비는 언제인가요?", "삼월"),
    ("When does the Leeds train leave?", "9:40"),
])
def test_a_word_inside_a_sentence_is_found_and_answered_within_256_tokens(notes: MemoryService, query: str,
                                                                            answer: str) -> None:
    result = notes.recall(SCOPE, query, token_budget=256)
    assert answered(result.context, [answer]), result.context
    assert token_count(result.context) <= 256


def test_bm25_finds_a_cjk_word_inside_a_sentence(notes: MemoryService) -> None:
    hits = notes.store.bm25_search(SCOPE, "chunks", "黄瓜", 5)
    assert hits and "黄瓜" in notes.store.fetch_chunks(SCOPE, [hits[0].id])[hits[0].id].text
    assert notes.store.bm25_search(SCOPE, "chunks", "정비", 5)  # a Korean word with its particle attached


def test_the_english_only_embedder_stays_out_of_a_cjk_query(notes: MemoryService) -> None:
    cjk = notes.recall(SCOPE, "冷蔵庫はどうなっていますか？", token_budget=256)
    assert any("reads English only" in w for w in cjk.warnings)
    assert all("vector" not in item.scores for item in cjk.items)
    english = notes.recall(SCOPE, "which hotel are we staying at?", token_budget=256)
    assert english.warnings == [] and any("vector" in item.scores for item in english.items)


def test_a_cjk_turn_makes_no_memory_and_stays_a_chunk(service: MemoryService, tmp_path: Path) -> None:
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "t1", "美玲", "2024-06-01T10:00:00Z", "我下个月要搬到杭州去工作了。"),
        turn("s1", "t2", "美玲", "2024-06-01T10:01:00Z", "我最喜欢的水果是荔枝。"),
    ])
    service.ingest(SCOPE, [chat])
    hit = service.recall(SCOPE, "美玲要搬到哪里？", token_budget=256)
    assert "杭州" in hit.context
    assert service.store.counts(SCOPE)["memories"] == 0  # the English rules read nothing in it
