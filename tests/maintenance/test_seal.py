"""`seal` on a store built through the production path: what it writes, that it never writes a
summary twice, how forgetting and source deletion reach the summaries, and the LLM path."""

from __future__ import annotations

import json
from pathlib import Path


from mnemoflow.config import load_settings
from mnemoflow.models import LinkDraft, MemoryDraft
from mnemoflow.service import MemoryService
from tests.conftest import plant
from tests.llm_double import ChatDouble, Reply
from tests.maintenance.conftest import ANA, OTHER_TENANT, OTHER_USER, transcript


def sealed(service: MemoryService) -> dict[tuple[str, str], list]:
    found: dict[tuple[str, str], list] = {}
    for s in service.summaries(ANA, limit=1000):
        found.setdefault((s.level, s.subject_kind), []).append(s)
    return found


def commits(service: MemoryService) -> int:
    return service.store.sql("SELECT count(*) FROM commits")[1][0][0]


def test_seal_writes_the_tree_each_summary_citing_its_children(tree_service: MemoryService) -> None:
    tree_service.maintain("cluster")
    report = tree_service.maintain("seal")
    assert report.ok and report.counts["L1_source"] == 4 + 2  # Ana's sessions, and one each of two other users
    tree = sealed(tree_service)
    assert len(tree[("L1", "source")]) == 4 and len(tree[("L1", "day")]) == 4
    memories = {m.id: m for m in tree_service.get_all(ANA, limit=1000)}
    l1 = {s.id: s for kind in ("source", "day", "topic") for s in tree.get(("L1", kind), [])}
    for s in l1.values():
        assert s.child_ids == s.memory_ids and set(s.child_ids) <= memories.keys()  # L1: memories
        assert s.content.startswith(s.title + ": ") and s.tokens <= tree_service.settings.seal_l1_tokens
        assert set(s.cited_ids) == set(s.memory_ids) and s.method == "extractive"
    months = {s.subject_key: s for s in tree[("L2", "month")]}
    assert set(months) == {"2023-03", "2023-04"} and months["2023-03"].title == "March 2023"
    for month in months.values():
        children = [l1[c] for c in month.child_ids]  # L2: L1 summaries, the days of the month
        assert {c.subject_kind for c in children} == {"day"} and len(children) == 2
        assert set(month.memory_ids) == {m for c in children for m in c.memory_ids}
    days = {s.subject_key for s in tree[("L1", "day")]}
    assert days == {"2023-03-06", "2023-03-20", "2023-04-03", "2023-04-17"}
    assert all(v.ok for v in tree_service.verify())


def test_summaries_are_searchable_by_bm25_and_vector(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")  # embeds what it sealed before it returns
    store = tree_service.store
    store.refresh_search_indexes()
    hits = store.bm25_search(ANA, "summaries", "Dolomites Lagazuoi", 10)
    assert hits and all(h.id.startswith("sum_") for h in hits)
    vector = tree_service.embedder.embed_query("planning the hiking holiday in the mountains")
    assert store.vector_search(ANA, "summaries", vector, 5)
    pending = store.sql("SELECT count(*) FROM summaries WHERE embedding_status <> 'done'")[1][0][0]
    assert pending == 0


def test_sealing_again_writes_nothing_and_new_children_make_a_new_summary(tree_service: MemoryService,
                                                                          tmp_path: Path) -> None:
    tree_service.maintain("seal")
    before = {s.id: s.content for s in tree_service.summaries(ANA, limit=1000)}
    chain = commits(tree_service)
    again = tree_service.maintain("seal")
    assert again.counts == {} and commits(tree_service) == chain
    later = {("trip-5", "2023-04-17T21:00:00"): [  # later the same day: the day and its session grow
        ("Ana", "I ordered a new rain jacket for the Dolomites."),
        ("Ana", "I'm reading a guidebook about the Via Ferrata routes."),
        ("Ana", "Clara booked a second hut, the Rifugio Averau, for the last night."),
    ]}
    tree_service.ingest(ANA, [transcript(tmp_path / "later.jsonl", later)])
    report = tree_service.maintain("seal")
    after = {s.id: s for s in tree_service.summaries(ANA, limit=1000)}
    assert {i: after[i].content for i in before} == before  # what was sealed stays as it was
    new = [s for i, s in after.items() if i not in before]
    assert {(s.level, s.subject_kind) for s in new} >= {("L1", "day"), ("L1", "source")}
    day = next(s for s in new if s.subject_kind == "day")
    old_day = next(s for i, s in after.items() if i in before and s.subject_key == day.subject_key)
    assert not set(day.memory_ids) & set(old_day.memory_ids)  # only what the first one did not cover
    assert report.counts.get("retired", 0) == 0
    assert all(v.ok for v in tree_service.verify())


def test_a_forgotten_memory_hides_its_summaries_and_the_next_seal_replaces_them(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")
    march = next(s for s in tree_service.summaries(ANA, level="L2") if s.subject_key == "2023-03")
    gone = march.memory_ids[0]
    covering = {s.id for s in tree_service.summaries(ANA, limit=1000) if gone in s.memory_ids}
    shown = tree_service.recall(ANA, "What did we talk about in March 2023?", token_budget=2048)
    assert shown.items[0].id == march.id
    tree_service.delete(ANA, gone)
    assert not tree_service.store.fetch_summaries(ANA, list(covering))  # hidden at once, before any seal
    result = tree_service.recall(ANA, "What did we talk about in March 2023?", token_budget=2048)
    assert not {i.id for i in result.items} & covering
    report = tree_service.maintain("seal")
    assert report.counts["retired"] == len(covering)
    retired = [s for s in tree_service.summaries(ANA, include_retired=True, limit=1000) if s.id in covering]
    assert all(s.retired_at is not None and gone in (s.retired_reason or "") for s in retired)
    live = tree_service.summaries(ANA, limit=1000)
    assert all(gone not in s.memory_ids for s in live)
    assert any(s.subject_key == "2023-03" and s.level == "L2" for s in live)  # March summarised anew without it
    assert all(v.ok for v in tree_service.verify())


def test_a_superseded_memory_hides_its_summaries(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")
    day = next(s for s in tree_service.summaries(ANA, level="L1") if s.subject_kind == "day")
    tree_service.store.write_memory(ANA, MemoryDraft(content="Ana changed her plans", kind="fact", salience=0.5),
                                    actor="test", links=(LinkDraft("UPDATES", day.memory_ids[0], 0.95, "test"),))
    assert day.id not in tree_service.store.fetch_summaries(ANA, [day.id])
    assert day.id in {s.id for s in tree_service.summaries(ANA, limit=1000)}  # hidden from recall, not retired yet
    tree_service.maintain("seal")
    assert day.id not in {s.id for s in tree_service.summaries(ANA, limit=1000)}


def test_summaries_stay_inside_their_scope(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")
    anas = {s.id for s in tree_service.summaries(ANA, limit=1000)}
    for scope in (OTHER_USER, OTHER_TENANT):
        theirs = tree_service.summaries(scope, limit=1000)
        assert theirs and not {s.id for s in theirs} & anas
        assert not tree_service.store.fetch_summaries(scope, sorted(anas))
        assert all("Dolomites" not in s.content for s in theirs)


def test_deleting_a_source_hides_the_summaries_of_its_memories(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")
    document = tree_service.store.sql(
        "SELECT document_id FROM source_documents WHERE title = 'trip-1'")[1][0][0]
    session = next(s for s in tree_service.summaries(ANA, limit=1000) if s.subject_key == document)
    tree_service.store.delete_documents(ANA, [document], actor="test")
    assert session.id not in tree_service.store.fetch_summaries(ANA, [session.id])
    tree_service.maintain("seal")
    assert session.id not in {s.id for s in tree_service.summaries(ANA, limit=1000)}


def test_a_summary_edited_behind_the_store_fails_verify(tree_service: MemoryService) -> None:
    tree_service.maintain("seal")
    plant(tree_service, "UPDATE summaries SET content = 'nothing happened' WHERE level = 'L2'")
    problems = [p for v in tree_service.verify() for p in v.problems]
    assert problems and all("summaries row" in p for p in problems)


def test_a_configured_model_writes_the_summaries(tree_service: MemoryService, double: ChatDouble) -> None:
    double.script(Reply(json.dumps({"summary": "Ana and Ben planned a Dolomites trip and talked about work."})))
    settings = load_settings(tree_service.settings.home, llm_provider="openai", llm_model="m",
                             llm_base_url=double.base_url, generate_memories=False)
    tree_service.close()
    with MemoryService(settings) as service:
        report = service.maintain("seal")
        found = service.summaries(ANA, limit=1000)
    assert found and all(s.method == "llm" for s in found) and "llm_fallbacks" not in report.counts
    assert all(s.content == f"{s.title}: Ana and Ben planned a Dolomites trip and talked about work." for s in found)
    months = [r for r in double.requests if "Notes about March 2023" in r["messages"][1]["content"]]
    assert months and "Monday, 6 March 2023:" in months[0]["messages"][1]["content"]  # an L2 reads its L1s


def test_a_failing_model_leaves_extractive_summaries(tree_service: MemoryService, double: ChatDouble) -> None:
    double.script(Reply(status=503))
    settings = load_settings(tree_service.settings.home, llm_provider="openai", llm_model="m",
                             llm_base_url=double.base_url, llm_max_retries=0)
    tree_service.close()
    with MemoryService(settings) as service:
        report = service.maintain("seal", tenant_id="acme")
        found = service.summaries(ANA, limit=1000)
    assert found and all(s.method == "extractive (llm-fallback: HTTP 503 after 1 attempt)" for s in found)
    assert report.counts["llm_fallbacks"] == sum(n for what, n in report.counts.items() if what.startswith("L"))
