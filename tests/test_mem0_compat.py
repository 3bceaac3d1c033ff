"""mem0's documented calls, one by one, against mnemoflow: the Python quickstart and the memory
operations pages (add, search, update, delete, async, metadata filtering), written from the
documentation with only the import line changed. Each call's result is checked for mem0's shape
(keys a mem0 program reads) and for its meaning (what it says about the memories)."""

from __future__ import annotations

import asyncio
import json

import pytest

from mnemoflow import AsyncMemory, Memory  # was: from mem0 import AsyncMemory, Memory

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _texts(result) -> list[str]:
    return [entry["memory"] for entry in result["results"]]


def test_python_quickstart_runs_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/open-source/python-quickstart: initialise, add a conversation, search, print."""
    m = Memory()
    messages = [
        {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
        {"role": "assistant", "content": "Hey Alex! I'll remember your interests."},
    ]
    m.add(messages, user_id="alex")
    results = m.search("What do you know about me?", filters={"user_id": "alex"})
    print(results)

    assert "basketball" in capsys.readouterr().out
    [hit] = results["results"]
    assert {"id", "memory", "user_id", "created_at", "score"} <= set(hit)
    assert hit["user_id"] == "alex" and "basketball" in hit["memory"] and "gaming" in hit["memory"]
    assert isinstance(hit["score"], float) and json.dumps(results.mem0())  # plain JSON when a program needs it
    m.close()


def test_add_memory_page() -> None:
    """core-concepts/memory-operations/add: inferred memories, metadata, raw messages with infer=False."""
    m = Memory()
    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
        {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
        {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies."},
    ]
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    assert all(set(e) >= {"id", "memory", "event"} for e in result["results"])
    assert [e["event"] for e in result["results"]] == ["ADD"] * len(result["results"])
    assert any("sci-fi" in text for text in _texts(result))  # the fact, not the chit-chat
    assert not any("How about thriller movies" in text for text in _texts(result))

    raw = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False)
    assert _texts(raw) == [msg["content"] for msg in messages]  # stored exactly as provided
    # the same content again is already held: no second copy, whichever mode wrote it first
    assert [e["event"] for e in m.add(messages, user_id="alice", infer=False)["results"]] == ["NONE"] * 4
    m.close()


def test_search_memory_page() -> None:
    """core-concepts/memory-operations/search: entity ids in filters, metadata filters, session filters."""
    m = Memory()
    m.add([{"role": "user", "content": "I drink tea in the morning, never coffee."}], user_id="alice",
          metadata={"categories": ["diet"]})
    m.add([{"role": "user", "content": "I'm training for the Lisbon half marathon."}], user_id="alice",
          agent_id="chatbot", run_id="session-123")
    m.add([{"role": "user", "content": "I drink coffee all day."}], user_id="bob")

    related = m.search("Should I drink coffee or tea?", filters={"user_id": "alice"})
    assert "tea" in _texts(related)[0] and all(e["user_id"] == "alice" for e in related["results"])
    diet = m.search("food preferences", filters={"user_id": "alice", "categories": {"contains": "diet"}})
    assert len(diet["results"]) == 1 and "tea" in diet["results"][0]["memory"]
    session = m.search("query", filters={"user_id": "alice", "agent_id": "chatbot", "run_id": "session-123"})
    assert _texts(session) == [t for t in _texts(session) if "marathon" in t] and session["results"]
    assert session["results"][0]["run_id"] == "session-123"
    recent = m.search("recent memories", filters={"AND": [{"user_id": "alice"}, {"created_at": {"gte": "2024-07-01"}}]})
    assert len(recent["results"]) == 2
    top = m.search("drinks", filters={"user_id": "alice"}, top_k=1, threshold=0.1)
    assert len(top["results"]) <= 1
    m.close()


def test_update_delete_and_history_pages() -> None:
    """memory-operations/update and delete, the history call, and the issue's Berlin -> Porto -> Lisbon."""
    m = Memory()
    first = m.add("Alex moved from Berlin to Porto in March 2026", user_id="alex")
    moved = m.add("Alex now lives in Lisbon, he moved again in October", user_id="alex")
    assert [e["event"] for e in moved["results"]] == ["UPDATE"]
    assert moved["results"][0]["previous_memory"] == first["results"][0]["memory"]
    assert [e["memory"] for e in m.get_all(filters={"user_id": "alex"})["results"]] == [moved["results"][0]["memory"]]

    coffee = m.add("Alex prefers espresso", user_id="alex")["results"][0]["id"]
    confirmation = m.update(memory_id=coffee, text="Alex now prefers decaf coffee")
    assert "message" in confirmation
    assert m.update(memory_id=confirmation["id"], data="Alex drinks decaf after 4pm")["message"]  # the old name
    history = m.history(memory_id=confirmation["id"])
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history if h["event"]] == [
        ("ADD", None, "Alex prefers espresso"), ("UPDATE", "Alex prefers espresso", "Alex now prefers decaf coffee"),
        ("UPDATE", "Alex now prefers decaf coffee", "Alex drinks decaf after 4pm")]
    assert all({"id", "memory_id", "old_memory", "new_memory", "event", "created_at"} <= set(h) for h in history)
    current = m.get(memory_id=m.search("coffee", filters={"user_id": "alex"}, top_k=1)["results"][0]["id"])
    assert current["memory"] == "Alex drinks decaf after 4pm"

    assert m.delete(memory_id=current["id"])["message"]
    assert current["id"] not in [e["id"] for e in m.get_all(user_id="alex")["results"]]
    assert m.delete_all(user_id="alex")["message"]
    assert m.get_all(user_id="alex")["results"] == []
    with pytest.raises(Exception, match="user_id, agent_id or run_id"):
        m.delete_all()  # mem0 refuses a delete_all without a filter too
    m.close()


def test_metadata_filtering_page() -> None:
    """open-source/features/metadata-filtering: comparison, list, string, wildcard and logical operators."""
    m = Memory()
    for text, meta in [("Ship the alpha build", {"project": "alpha", "priority": 9, "status": "active"}),
                       ("Review the beta design", {"project": "beta", "priority": 5, "status": "completed"}),
                       ("Plan the team offsite", {"priority": 2, "status": "archived", "title": "Offsite meeting"})]:
        m.add(text, user_id="project_manager", metadata=meta, infer=False)

    def found(filters: dict) -> set[str]:
        return set(_texts(m.search("What tasks need attention?", filters={"user_id": "project_manager", **filters})))

    assert found({"priority": {"gte": 8}}) == {"Ship the alpha build"}
    assert found({"status": {"ne": "completed"}, "priority": {"lt": 9}}) == {"Plan the team offsite"}
    assert found({"project": {"in": ["alpha", "beta"]}, "status": {"nin": ["archived"]}}) == {
        "Ship the alpha build", "Review the beta design"}
    assert found({"title": {"icontains": "MEETING"}}) == {"Plan the team offsite"}
    assert found({"project": "*"}) == {"Ship the alpha build", "Review the beta design"}
    assert found({"AND": [{"OR": [{"project": "alpha"}, {"project": "beta"}]}, {"NOT": [{"status": "completed"}]}]}) \
        == {"Ship the alpha build"}
    m.close()


def test_async_memory_page() -> None:
    """open-source/features/async-memory: core operations, scoped organisation, gather."""

    async def core_operations() -> None:
        memory = AsyncMemory()
        result = await memory.add(messages=[{"role": "user", "content": "I'm travelling to SF"},
                                            {"role": "assistant", "content": "That's great to hear!"}], user_id="alice")
        assert result["results"] and result["results"][0]["event"] == "ADD"
        results = await memory.search(query="Where am I travelling?", filters={"user_id": "alice"})
        assert "SF" in results["results"][0]["memory"]
        all_memories = await memory.get_all(filters={"user_id": "alice"})
        memory_id = all_memories["results"][0]["id"]
        assert (await memory.get(memory_id=memory_id))["memory"] == results["results"][0]["memory"]
        updated = await memory.update(memory_id=memory_id, text="I'm travelling to Seattle")
        assert "message" in updated
        await memory.add(messages=[{"role": "user", "content": "I prefer vegetarian food"}], user_id="alice",
                         agent_id="diet-assistant", run_id="consultation-001")
        everything = await memory.get_all(filters={"user_id": "alice"})
        agent = await memory.get_all(filters={"user_id": "alice", "agent_id": "diet-assistant"})
        session = await memory.get_all(filters={"user_id": "alice", "run_id": "consultation-001"})
        assert len(everything["results"]) == 2 and len(agent["results"]) == len(session["results"]) == 1
        assert "vegetarian" in agent["results"][0]["memory"]
        assert [h["event"] for h in await memory.history(memory_id=updated["id"]) if h["event"]] == ["ADD", "UPDATE"]
        await memory.delete(memory_id=updated["id"])
        await memory.delete_all(user_id="alice")
        assert (await memory.get_all(filters={"user_id": "alice"}))["results"] == []
        tasks = [memory.add(messages=[{"role": "user", "content": f"My locker is number {i}"}], user_id=f"user_{i}")
                 for i in range(5)]
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert not [o for o in outcomes if isinstance(o, Exception)]
        await memory.close()

    asyncio.run(core_operations())
