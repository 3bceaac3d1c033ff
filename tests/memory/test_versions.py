"""What a new memory does to the versions around the one it relates to (`relate/versions.py`), and how recall
orders and marks them (`recall/currency.py`): through the store, the pipeline and recall for real.
Wording of these tests' own."""

from __future__ import annotations

from datetime import datetime

from mnemoflow.memory.relate import versions
from mnemoflow.memory.relate.relations import Neighbour
from mnemoflow.models import MemoryItem
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope


def _post(service: MemoryService, scope: Scope, said: list[tuple[str, str]], speaker: str = "Ana") -> None:
    service.post_events(scope, [{"session_id": f"s{n}", "turn_id": f"t{n}", "speaker": speaker, "role": "user",
                                 "ts": ts, "text": text} for n, (ts, text) in enumerate(said)])


def _old_and_new(service: MemoryService, scope: Scope, old_word: str, new_word: str) -> tuple[MemoryItem, MemoryItem]:
    """The current memories holding `old_word` and `new_word`, with the MAY_UPDATE that links them checked."""
    memories = {m.content: m for m in service.store.list_memories(scope)}
    old = next(m for c, m in memories.items() if old_word in c)
    new = next(m for c, m in memories.items() if new_word in c)
    assert service.store.linked_memories(scope, [new.id], ("MAY_UPDATE",)) == [(new.id, old.id, "MAY_UPDATE")]
    return old, new


def test_a_change_keeps_the_other_facts_of_the_memory_it_replaces_current_and_cited(service: MemoryService) -> None:
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-05T09:00:00Z", "I live in Leeds and teach chemistry at Roundhay School."),
                           ("2025-06-01T09:00:00Z", "I moved to York.")])
    current = {m.content: m for m in service.store.list_memories(scope)}
    assert "Ana teach chemistry at Roundhay School" not in current  # the subject is written with its verb
    kept = next(m for c, m in current.items() if "chemistry" in c and "Leeds" not in c)
    assert kept.content == "Ana teaches chemistry at Roundhay School"
    assert service.store.memory_source_turns(scope)[kept.id] == ["t0"]  # cited as the old memory was
    assert not any("Leeds" in c for c in current)
    items = service.recall(scope, "What does Ana teach?", token_budget=512).items
    assert any(item.id == kept.id for item in items)


def test_an_outdated_fact_said_again_reinforces_the_old_version(service: MemoryService) -> None:
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-05T09:00:00Z", "I live in Leeds."), ("2025-06-01T09:00:00Z", "I moved to York."),
                           ("2025-07-01T09:00:00Z", "I live in Leeds.")])
    current = [m.content for m in service.store.list_memories(scope)]
    assert not any("Leeds" in c for c in current), current
    old = next(m for m in service.store.list_memories(scope, include_inactive=True) if "Leeds" in m.content)
    assert not old.is_latest
    assert sorted(service.store.memory_source_turns(scope)[old.id]) == ["t0", "t2"]


def test_a_possible_update_is_linked_for_review_and_recall_marks_the_older(service: MemoryService,
                                                                        monkeypatch) -> None:
    monkeypatch.setattr(versions, "MAY_UPDATE_AT", 0.3)  # whatever the pair's vectors: the rules cannot classify it
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-10T09:00:00Z", "My laptop runs Windows 11."),
                           ("2025-03-02T09:00:00Z", "I put Fedora on the laptop over the weekend.")])
    old, new = _old_and_new(service, scope, "Windows", "Fedora")
    [review] = [r for r in service.review_items(scope) if r.src == new.id]
    assert review.proposed_type == "UPDATES" and review.dst == old.id and review.reason.startswith("possible update")
    items = service.recall(scope, "Which operating system is on Ana's laptop?", token_budget=512).items
    ids = [item.id for item in items]
    assert ids.index(new.id) < ids.index(old.id)
    marked = next(item for item in items if item.id == old.id)
    assert "said on 2025-01-10; possibly superseded by" in marked.text and "on 2025-03-02" in marked.text
    assert "possibly superseded" in marked.why
    service.decide_review(scope, review.review_id, accept=True)
    assert old.id not in {m.id for m in service.store.list_memories(scope)}  # accepted: an UPDATES


def test_the_newer_turn_about_the_same_thing_ranks_first(service: MemoryService) -> None:
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-10T09:00:00Z", "I'm on the night shift at the bakery, 10pm to 6am."),
                           ("2025-04-02T09:00:00Z", "Switched to the early shift at the bakery, 5am to 1pm.")])
    texts = [item.text for item in service.recall(scope, "Which shift does Ana work at the bakery?",
                                                  token_budget=512).items]
    early = next(n for n, t in enumerate(texts) if "early shift" in t)
    night = next(n for n, t in enumerate(texts) if "night shift" in t and "early" not in t)
    assert early < night, texts


def test_a_later_answer_in_other_words_ranks_first_for_a_question_about_now(service: MemoryService) -> None:
    """The two turns share no word and their vectors are far apart; only the question says they answer one
    thing. Asked about now, the later goes first; asked about the past, the order is the searches' own."""
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-10T09:00:00Z", "Cycling along the Thames every morning is the best part "
                                                    "of living in London."),
                           ("2025-01-10T09:05:00Z", "My sister is getting married in June."),
                           ("2025-05-02T09:00:00Z", "Finally got the keys to the flat in Glasgow, the removal "
                                                    "van comes Friday.")])
    texts = [item.text for item in service.recall(scope, "Which city does Ana live in?", token_budget=512).items]
    glasgow = next(n for n, t in enumerate(texts) if "Glasgow" in t)
    london = next(n for n, t in enumerate(texts) if "London" in t)
    assert glasgow < london, texts
    asked = service.recall(scope, "Which city did Ana live in back in January?", token_budget=512)
    assert not any("newer of candidates" in item.why for item in asked.items if "Glasgow" in item.text)


def test_the_assistant_s_later_turn_is_never_the_newer_answer(service: MemoryService) -> None:
    """An assistant's reply restates the subject in many words, later than the person said it; it holds no
    value of the person's, so a question about now does not put it first."""
    scope = Scope("acme", "ana")
    service.post_events(scope, [
        {"session_id": "s1", "turn_id": "t1", "speaker": "Ana", "role": "user", "ts": "2025-01-10T09:00:00Z",
         "text": "My pottery page has about 1,200 people following it."},
        {"session_id": "s1", "turn_id": "t2", "speaker": "assistant", "role": "assistant",
         "ts": "2025-01-10T09:01:00Z", "text": "How many followers you have on Instagram matters less than how "
         "many of your followers see your posts."},
        {"session_id": "s2", "turn_id": "t3", "speaker": "assistant", "role": "assistant",
         "ts": "2025-03-10T09:00:00Z", "text": "To grow your Instagram followers, post your pottery at the same "
         "time each day, use a few focused hashtags and reply to every comment on your account."}])
    texts = [item.text for item in service.recall(scope, "How many Instagram followers do I have?",
                                                  token_budget=512).items]
    later = next(n for n, t in enumerate(texts) if "To grow" in t)
    earlier = next(n for n, t in enumerate(texts) if "matters less" in t)
    assert earlier < later, texts


def test_a_question_a_document_answers_moves_no_one_s_later_words_up(service: MemoryService, tmp_path) -> None:
    """What a person said near a question about a document's subject need not be one thing of theirs: the
    searches' order stands."""
    scope = Scope("acme", "ana")
    notes = tmp_path / "venue.md"
    notes.write_text("# Getting to the venue\n\nFrom the airport, take the red metro line to Oriente and a "
                     "taxi for the last ten minutes. Buses 718 and 742 stop at the main gate.\n")
    service.ingest(scope, [notes])
    _post(service, scope, [("2025-01-10T09:00:00Z", "On offsite days I prefer written standups in the channel."),
                           ("2025-03-02T09:00:00Z", "Can you book my flight to Lisbon? An aisle seat, arriving "
                                                    "on the 13th.")])
    items = service.recall(scope, "How do I get to the offsite venue from the airport?", token_budget=512).items
    assert "red metro line" in items[0].text
    assert not any("newer of candidates" in item.why for item in items), [(i.text, i.why) for i in items]


def test_newer_turns_on_a_subject_move_above_the_asked_one_without_pushing_it_down(service: MemoryService) -> None:
    """A person who comes back to a subject many times: the newest of those turns goes first, and the turn the
    question is about keeps its place but one (it was once swapped to the bottom of the group)."""
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-10T09:00:00Z", "I planted twelve tomato seedlings in the back garden today."),
                           ("2025-02-10T09:00:00Z", "The tomato seedlings in the back garden are growing fast."),
                           ("2025-03-10T09:00:00Z", "My tomato plants in the back garden have their first flowers."),
                           ("2025-04-10T09:00:00Z", "The tomato plants in my back garden need staking now."),
                           ("2025-05-10T09:00:00Z", "Picked the first ripe tomatoes from my back garden plants.")])
    texts = [item.text for item in service.recall(scope, "How many tomato seedlings did Ana plant?",
                                                  token_budget=2048).items]
    asked = next(n for n, t in enumerate(texts) if "twelve" in t)
    assert asked <= 1, texts


def test_possible_updates_stay_in_their_scope(service: MemoryService, monkeypatch) -> None:
    monkeypatch.setattr(versions, "MAY_UPDATE_AT", 0.3)
    mine, theirs = Scope("acme", "ana"), Scope("acme", "ben")
    _post(service, mine, [("2025-01-10T09:00:00Z", "My laptop runs Windows 11.")])
    _post(service, theirs, [("2025-03-02T09:00:00Z", "I put Fedora on the laptop over the weekend.")], speaker="Ben")
    ids = [m.id for m in service.store.list_memories(mine)] + [m.id for m in service.store.list_memories(theirs)]
    assert service.store.linked_memories(mine, ids, ("MAY_UPDATE",)) == []
    assert service.store.linked_memories(theirs, ids, ("MAY_UPDATE",)) == []
    assert service.review_items(mine) == [] and service.review_items(theirs) == []


def test_a_change_the_rules_doubt_stands_as_a_possible_update_until_a_person_decides(service: MemoryService) -> None:
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-01-10T09:00:00Z", "I drink two espressos every morning."),
                           ("2025-03-02T09:00:00Z", "I've switched to green tea in the mornings.")])
    old, new = _old_and_new(service, scope, "espresso", "green tea")
    [review] = [r for r in service.review_items(scope) if r.src == new.id]
    assert (review.proposed_type, review.dst) == ("UPDATES", old.id)  # doubted: a person decides
    assert [(c.src.id, c.dst.id) for c in service.store.open_conflicts(scope)] == [(new.id, old.id)]
    items = service.recall(scope, "What does Ana drink in the morning?", token_budget=512).items
    ids = [item.id for item in items]
    assert ids.index(new.id) < ids.index(old.id)
    assert "possibly superseded by" in next(item for item in items if item.id == old.id).text
    service.decide_review(scope, review.review_id, accept=False)  # both hold: the pair is settled
    assert service.store.open_conflicts(scope) == []
    items = service.recall(scope, "What does Ana drink in the morning?", token_budget=512).items
    assert not any("possibly superseded" in item.text for item in items)
    assert {old.id, new.id} <= {m.id for m in service.store.list_memories(scope)}


def test_a_new_holder_in_other_words_is_a_possible_update_not_a_silent_second_value(service: MemoryService) -> None:
    scope = Scope("acme", "hugo")
    _post(service, scope, [("2025-01-10T09:00:00Z", "My dentist is Dr. Silva."),
                           ("2025-05-02T09:00:00Z", "I see Dr. Costa for my teeth now.")], speaker="Hugo")
    old, new = _old_and_new(service, scope, "Silva", "Costa")
    text = {item.id: item.text for item in service.recall(scope, "Who is Hugo's dentist?", token_budget=512).items}
    assert "possibly superseded by" in text[old.id]


def test_a_new_number_for_part_of_a_memory_keeps_the_rest_of_it(service: MemoryService) -> None:
    """"The club moved me to rack 9" names the rack, not the canoe nor the club: the memory it replaces is
    restated with the new number, so nothing the older one said is lost."""
    for n, (first, then, kept) in enumerate([
            ("I keep the canoe on rack 3 at the rowing club.", "The club moved me to rack 9.",
             "keeps the canoe on rack 9 at the rowing club"),
            ("My locker at the leisure centre is number 31.", "They've moved me to locker 44.",
             "locker at the leisure centre is number 44")]):
        scope = Scope("acme", f"ana{n}")
        _post(service, scope, [("2025-01-05T09:00:00Z", first), ("2025-03-01T09:00:00Z", then)])
        current = [m.content for m in service.store.list_memories(scope)]
        assert any(kept in c for c in current), current
        assert not any(word in c for c in current for word in (" 3 ", " 31")), current


def test_a_later_clause_of_the_same_turn_does_not_move_the_value_the_first_one_set(service: MemoryService) -> None:
    """"The opening is now June 3. So the flyer drop moves a week earlier too": one statement. The second
    clause's shift is not applied to the opening the first clause has just moved (it was: May 27)."""
    scope = Scope("acme", "ana")
    _post(service, scope, [
        ("2025-05-02T09:00:00Z", "We open the second bakery on June 10 and I am planning a flyer drop for the week before."),
        ("2025-05-09T09:00:00Z", "The landlord wants us in early, the opening is now June 3. So the flyer drop moves a "
                                 "week earlier too.")])
    current = [m.content for m in service.store.list_memories(scope)]
    assert any("second bakery on June 3" in c for c in current), current
    assert not any("May 27" in c for c in current), current


def test_a_date_pulled_in_or_brought_forward_replaces_the_one_it_moves(service: MemoryService) -> None:
    """"Pulled it in to", "brought the viewing forward to": a move earlier, said with words between the verb
    and its particle, is a change to the date named, as "moved it to" is."""
    for n, (first, then, new, old) in enumerate([
            ("The kiln firing is booked for October 20.", "They pulled it in to October 13.", "October 13", "October 20"),
            ("The flat viewing is on August 9.", "The agent brought the viewing forward to August 4.",
             "August 4", "August 9")]):
        scope = Scope("acme", f"ana{n}")
        _post(service, scope, [("2025-06-01T09:00:00Z", first), ("2025-07-01T09:00:00Z", then)])
        current = [m.content for m in service.store.list_memories(scope)]
        assert any(new in c for c in current), current
        assert not any(old in c for c in current), current


def test_a_value_stated_and_moved_in_one_turn_is_one_change_to_the_new_value(service: MemoryService) -> None:
    """"The firing is booked for October 20. Actually they pulled it in to October 13": one statement, so one
    current value, the new one; the old stays as its earlier version. The turn's next clause ("so the glazing
    day moves up a week too") does not move the firing a second time."""
    scope = Scope("acme", "ana")
    _post(service, scope, [("2025-06-01T09:00:00Z", "I'm doing a pottery course at the community studio."),
                           ("2025-07-01T09:00:00Z", "The kiln firing is booked for October 20. Actually they pulled "
                                                    "it in to October 13, so the glazing day moves up a week too.")])
    current = [m.content for m in service.store.list_memories(scope)]
    assert any("firing" in c and "October 13" in c for c in current), current
    assert not any(day in c for c in current for day in ("October 20", "October 6")), current
    history = [m.content for m in service.store.list_memories(scope, include_inactive=True) if not m.is_latest]
    assert any("October 20" in c for c in history), history


def test_a_detail_that_restates_what_a_change_replaces_is_a_possible_update(service: MemoryService) -> None:
    """"I have pottery on Mondays" / "What time?" / "7pm" holds two memories, the second saying all the first
    does and more; "No, it moved to Tuesdays" replaces the first, and the second may be stale too: linked
    MAY_UPDATE and queued for review, recall puts the change above it and marks it."""
    scope = Scope("acme", "lia")
    service.add_messages(scope, [{"role": "user", "content": "I have pottery on Mondays", "timestamp": "2026-01-05"},
                                 {"role": "assistant", "content": "What time?", "timestamp": "2026-01-05"},
                                 {"role": "user", "content": "7pm", "timestamp": "2026-01-05"}])
    detail = next(m for m in service.store.list_memories(scope) if "Mondays at 7pm" in m.content)
    service.add_messages(scope, [{"role": "assistant", "content": "Do you still do pottery on Mondays?"},
                                 {"role": "user", "content": "No, it moved to Tuesdays"}], timestamp=datetime(2026, 2, 2))
    change = next(m for m in service.store.list_memories(scope) if "Tuesdays" in m.content)
    assert (change.id, detail.id, "MAY_UPDATE") in service.store.linked_memories(scope, [change.id], ("MAY_UPDATE",))
    assert any(r.dst == detail.id and r.proposed_type == "UPDATES" for r in service.review_items(scope))
    items = service.recall(scope, "When is Lia's pottery class?", token_budget=512).items
    ids = [item.id for item in items]
    assert ids.index(change.id) < ids.index(detail.id)
    assert "possibly superseded by" in next(item for item in items if item.id == detail.id).text


def test_only_a_detail_that_says_all_the_replaced_memory_said_is_a_possible_update() -> None:
    replaced = Neighbour("m1", "Piers starts at Arup on April 14, 2025", "episode")
    restating = Neighbour("m2", "Piers starts at Arup on April 14, 2025 (office: Manchester)", "fact")
    other = Neighbour("m3", "Piers will work in Arup's Manchester office", "fact")
    unlinked = Neighbour("m4", "Piers starts at Arup on April 14, 2025, in the Leeds office", "fact")
    links, review = versions.extensions_replaced(replaced, {"m2", "m3"}, [replaced, restating, other, unlinked])
    assert [(link.type, link.target_id) for link in links] == [("MAY_UPDATE", "m2")]
    assert [(link.type, link.target_id) for link in review] == [("UPDATES", "m2")]
