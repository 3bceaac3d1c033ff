"""The profile builder on a user's memories written here: stable facts go static, what is going on
now goes dynamic, past episodes and chatter stay out, repeats make one line."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.memory.generate.direct import classify_kind
from mnemoflow.memory.profile import ProfileMemory, build_profile
from mnemoflow.models import MemoryItem

NOW = datetime(2024, 9, 30, 12, 0)
STATIC = ["Tomás lives in Porto with his partner Rui", "Tomás works as a structural engineer at Arup",
          "Tomás is allergic to shellfish", "Tomás has two daughters, Inês and Clara",
          "Tomás prefers window seats on long flights", "Tomás is vegetarian"]
DYNAMIC = ["Tomás is training for the Lisbon half marathon in November",
           "Tomás started a pottery course at the community centre",
           "Tomás is planning a trip to Japan next spring"]
OLD_PLAN = "Tomás is planning a surprise party for Rui"  # said long ago: no longer going on
CHATTER = ["Tomás said the weather was grey this morning", "Tomás thinks the new café is fine"]
OLD_EPISODE = "Tomás went to a concert at Casa da Música"


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def memory(i: int, text: str, at: datetime, **extra: object) -> MemoryItem:
    return MemoryItem(id=f"mem_{i}", tenant_id="t", user_id="u", content=text, kind=classify_kind(text),
                      salience=0.5, confidence=1.0, is_latest=True, created_at=at, updated_at=at, valid_from=at,
                      observed_at=at, embedding_status="done", **extra)


def build(embedder: LocalEmbedder, items: list[tuple[MemoryItem, int]], **limits: int):
    vectors = embedder.embed([m.content for m, _ in items])
    return build_profile([ProfileMemory(m, r, v) for (m, r), v in zip(items, vectors)],
                         static_lines=limits.get("static", 12), dynamic_lines=limits.get("dynamic", 8),
                         dynamic_days=30)


def test_stable_facts_are_static_current_plans_dynamic_the_rest_out(embedder: LocalEmbedder) -> None:
    items = [(memory(i, t, NOW - timedelta(days=200 - i)), 0) for i, t in enumerate(STATIC)]
    items += [(memory(10 + i, t, NOW - timedelta(days=5 - i)), 0) for i, t in enumerate(DYNAMIC)]
    items += [(memory(20, OLD_PLAN, NOW - timedelta(days=120)), 0),
              (memory(21, OLD_EPISODE, NOW - timedelta(days=90)), 0)]
    items += [(memory(30 + i, t, NOW - timedelta(days=3)), 0) for i, t in enumerate(CHATTER)]
    lines = build(embedder, items)
    static = {line.text.rstrip(".") for line in lines if line.section == "static"}
    dynamic = [line.text for line in lines if line.section == "dynamic"]
    assert static == set(STATIC)
    assert len(dynamic) == len(DYNAMIC) and all(any(d.startswith(t) for d in dynamic) for t in DYNAMIC)
    assert dynamic[0].startswith(DYNAMIC[-1])  # newest first, dated
    assert dynamic[0].endswith(f"({NOW - timedelta(days=3):%Y-%m-%d})")
    cited = {m for line in lines for m in line.memory_ids}
    assert not cited & {"mem_20", "mem_21", "mem_30", "mem_31"}
    assert all(len(line.memory_ids) == 1 for line in lines)


def test_a_plan_still_ahead_stays_dynamic(embedder: LocalEmbedder) -> None:
    ahead = memory(1, "Tomás is planning to move to Berlin", NOW - timedelta(days=90),
                   event_start_at=NOW + timedelta(days=60))
    lines = build(embedder, [(ahead, 0), (memory(2, STATIC[0], NOW), 0)])
    assert [(line.section, line.memory_ids) for line in lines] == [("static", ["mem_2"]), ("dynamic", ["mem_1"])]
    assert "for 2024-11-29" in lines[1].text


def test_home_work_and_plans_are_covered_however_long_ago_the_change(embedder: LocalEmbedder) -> None:
    """The README's promise: home, work (a manager, an office) and plans. A move said months ago is
    where the person lives now; a manager is work, said without "works as"; a plan said as thinking
    about it is a plan."""
    said = ["Ines relocated to Utrecht after the summer", "Ines's team lead at the agency is Bram",
            "Ines's office is on the canal side of the building", "Ines is considering a move to Ghent"]
    items = [(memory(1, said[0], NOW - timedelta(days=150)), 0), (memory(2, said[1], NOW - timedelta(days=80)), 0),
             (memory(3, said[2], NOW - timedelta(days=60)), 0), (memory(4, said[3], NOW - timedelta(days=4)), 0),
             (memory(5, "Ines went to a gig at the Tivoli", NOW - timedelta(days=40)), 0)]
    lines = build(embedder, items)
    assert {(line.section, tuple(line.memory_ids)) for line in lines} == {
        ("static", ("mem_1",)), ("static", ("mem_2",)), ("static", ("mem_3",)), ("dynamic", ("mem_4",))}


def test_the_same_thing_said_twice_is_one_line_citing_both(embedder: LocalEmbedder) -> None:
    items = [(memory(1, "Tomás is allergic to shellfish", NOW - timedelta(days=9)), 0),
             (memory(2, "Tomás is allergic to shellfish.", NOW - timedelta(days=2)), 0),
             (memory(3, STATIC[1], NOW), 0)]
    lines = build(embedder, items)
    assert sorted(map(sorted, (line.memory_ids for line in lines))) == [["mem_1", "mem_2"], ["mem_3"]]


def test_limits_keep_the_plainest_and_most_repeated(embedder: LocalEmbedder) -> None:
    items = [(memory(i, t, NOW - timedelta(days=100)), 5 if i == 4 else 0) for i, t in enumerate(STATIC)]
    items.append((memory(9, "Tomás loves the smell of rain", NOW - timedelta(days=100)), 0))
    lines = build(embedder, items, static=2, dynamic=0)
    assert len(lines) == 2 and all(line.section == "static" for line in lines)
    assert "mem_9" not in {m for line in lines for m in line.memory_ids}  # a liking is weaker than a stated fact


def test_nothing_in_nothing_out(embedder: LocalEmbedder) -> None:
    assert build_profile([], static_lines=5, dynamic_lines=5, dynamic_days=30) == []
