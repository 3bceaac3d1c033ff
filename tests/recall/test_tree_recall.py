"""Recall with the memory tree: summaries first for an overview, the profile for a person, nothing of
either for a narrow question, citations down to the turns, and the topic signal."""

from __future__ import annotations

from mnemoflow.recall import RecallFilters, preset
from mnemoflow.service import MemoryService
from tests.maintenance.conftest import ANA, OTHER_USER

MARCH = {"trip-1", "work-2"}


def grown(service: MemoryService) -> MemoryService:
    for job in ("cluster", "seal", "profiles"):
        assert service.maintain(job).ok
    return service


def test_an_overview_of_a_month_leads_with_its_summary_cited_down_to_the_turns(tree_service: MemoryService) -> None:
    result = grown(tree_service).recall(ANA, "What did we talk about in March 2023?", token_budget=512)
    first = result.items[0]
    assert first.kind == "summary" and first.text.startswith("March 2023: ")
    assert {c.session_id for c in first.citations} == MARCH and all(c.turn_id and c.memory_id for c in first.citations)
    shown = [c.memory_id for c in first.citations[:3]]
    memories = {m.id: m.content for m in tree_service.get_all(ANA, limit=1000)}
    assert all(memories[m].rstrip(".") in first.text for m in shown[:2])  # what the text shows is cited first
    assert first.tokens <= 512 * preset("default").summary_max_share
    assert any(item.kind in ("chunk", "memory") for item in result.items[1:])  # the evidence follows


def test_summarise_a_topic(tree_service: MemoryService) -> None:
    result = grown(tree_service).recall(ANA, "Summarise the Dolomites trip planning", token_budget=512)
    summaries = [item for item in result.items if item.kind == "summary"]
    assert summaries and result.items[0].kind == "summary"
    assert len(summaries) <= preset("default").summary_max_items
    assert "Dolomites" in summaries[0].text or "Lagazuoi" in summaries[0].text


def test_a_narrow_question_gets_exactly_what_it_got_without_the_tree(tree_service: MemoryService) -> None:
    grown(tree_service)
    plain = preset("default").model_copy(update={"summaries": "off", "profile": "off"})
    for query in ("What is Ana allergic to?", "Which hut did Ana book?", "Where does Ana take the train to?"):
        with_tree = tree_service.recall(ANA, query, token_budget=512)
        without = tree_service.recall(ANA, query, token_budget=512, config=plain)
        assert [i.id for i in with_tree.items] == [i.id for i in without.items]
        assert not {i.kind for i in with_tree.items} & {"summary", "profile"}


def test_a_question_about_a_person_leads_with_their_profile(tree_service: MemoryService) -> None:
    result = grown(tree_service).recall(ANA, "What do you know about Ana?", token_budget=512)
    lines = [item for item in result.items if item.kind == "profile"]
    assert lines and result.items[0].kind == "profile"
    assert all("Ana" in item.text for item in lines)  # the profile's lines about her
    assert sum(item.tokens for item in lines) <= 512 * preset("default").profile_max_share
    assert all(c.memory_id for item in lines for c in item.citations)
    assert result.context.startswith("[profile]\n- ")


def test_a_memory_a_profile_line_already_says_is_not_offered_again(tree_service: MemoryService) -> None:
    result = grown(tree_service).recall(ANA, "What do you know about Ana?", token_budget=4096)
    lines = [item for item in result.items if item.kind == "profile"]
    said = {c.memory_id for item in lines for c in item.citations}
    assert said  # the profile leads, citing its memories
    assert not said & {item.id for item in result.items if item.kind == "memory"}
    ranked = preset("default").model_copy(update={"profile": "ranked"})  # the profile after the evidence
    after = tree_service.recall(ANA, "What do you know about Ana?", token_budget=4096, config=ranked)
    memories = {item.id for item in after.items if item.kind == "memory"}
    for line in (item for item in after.items if item.kind == "profile"):
        assert not {c.memory_id for c in line.citations} <= memories  # a line saying only what is shown: left out


def test_ranked_summaries_compete_with_the_evidence_within_their_cap(tree_service: MemoryService) -> None:
    grown(tree_service)
    ranked = preset("default").model_copy(update={"summaries": "ranked", "summary_max_items": 1})
    result = tree_service.recall(ANA, "Dolomites trip hut booking", token_budget=4096, config=ranked)
    assert [item.kind for item in result.items].count("summary") == 1


def test_memory_searches_never_return_tree_items(tree_service: MemoryService) -> None:
    grown(tree_service)
    assert all(m.id.startswith("mem_") for m in tree_service.search(ANA, "Summarise the Dolomites trip", limit=20))
    only = tree_service.recall(ANA, "Summarise the Dolomites trip", token_budget=2048,
                               filters=RecallFilters(kinds=["memory", "chunk"]))
    assert {item.kind for item in only.items} <= {"memory", "chunk"}


def test_another_users_overview_holds_nothing_of_anas(tree_service: MemoryService) -> None:
    grown(tree_service)
    anas = {s.id for s in tree_service.summaries(ANA, limit=1000)}
    for query in ("Summarise the Dolomites trip planning", "What did we talk about in March 2023?",
                  "Tell me about Ana"):
        items = tree_service.recall(OTHER_USER, query, token_budget=2048).items
        assert not {item.id for item in items} & anas
        assert not any("Dolomites" in item.text for item in items)


def test_the_topic_signal_lifts_the_querys_topic(tree_service: MemoryService) -> None:
    grown(tree_service)
    boosted = preset("default").model_copy(update={"topic_boost": 0.5, "summaries": "off", "profile": "off"})
    result = tree_service.recall(ANA, "hut menus for the Dolomites", token_budget=2048, config=boosted)
    lifted = [item for item in result.items if "topic_factor" in item.scores]
    assert lifted and all(item.scores["topic_factor"] == 1.5 and "query's topic" in item.why for item in lifted)
    plain = tree_service.recall(ANA, "hut menus for the Dolomites", token_budget=2048)
    assert not any("topic_factor" in item.scores for item in plain.items)  # off by default
