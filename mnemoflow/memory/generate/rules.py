"""The offline memory generation engine: rules, no model, deterministic.

It is what generation runs on when no LLM endpoint is configured, so it has to be right rather than
merely present. Each sentence of a turn is judged on its own: small talk, thanks, questions, requests
and advice are not stored; statements about people, plans, preferences, rules and procedures are,
rewritten to stand alone: the speaker's "I" becomes their name and "you" the person addressed
(coref), relative dates become absolute ones (temporal), and a short answer is read together with
the question it answers (followup). A bare value said in place of an earlier one ("make that 10",
"the email says 11:15") is the earlier statement with the new value. Names, numbers and rare terms pass
through verbatim: only pronouns, the verb after them, date phrases and a corrected value are ever
rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from mnemoflow.memory.english.coref import (
    Mention,
    find_mentions,
    possessive,
    rewrite_persons,
)
from mnemoflow.memory.english.language import english_part
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.sentences import (
    is_padding,
    split_clauses,
    split_sentences,
    strip_padding,
)
from mnemoflow.memory.english.smalltalk import is_advice, is_small_talk
from mnemoflow.memory.english.temporal import resolve_dates
from mnemoflow.memory.english.verbs import expand_is
from mnemoflow.memory.generate.candidates import (
    Candidate,
    GenerationContext,
    MemoryContext,
    TurnView,
)
from mnemoflow.memory.generate.direct import classify_kind
from mnemoflow.memory.generate.drafts import (
    _bridges,
    _corrected,
    _Draft,
    _joined,
    _merge_clause,
    _person_confidence,
    _render_segments,
    _reshaped,
    _told_in_asking,
    _with_subject,
)
from mnemoflow.memory.generate.destination import destination, is_going_without_place, with_destination
from mnemoflow.memory.generate.followup import (
    allergy_answer,
    asked_of,
    first_said,
    is_clause,
    is_polar,
    merge,
    refined,
    reports_done,
    with_allergen,
)
from mnemoflow.memory.generate.judge import (
    _PRONOUN_START,
    _RULE_START,
    _finish,
    _has_detail,
    _has_verb,
    _is_assistant,
    _kind,
    _lower_first,
    _names_someone,
    _not_worth_keeping,
    _Turn,
    display_name,
)
from mnemoflow.memory.generate.turn import ONE_CHANGE, whole_turn
from mnemoflow.memory.generate.referents import (
    _mine_named_before,
    _owned_by_speaker,
    dash_topic,
    recent_mentions,
    the_thing_asked,
    they_asked_about,
    without_heading,
)
from mnemoflow.models import MemoryKind
from mnemoflow.scoring import fast_score

_REMEMBER = re.compile(
    r"^(?:(?:please|pls|plz)\s+)?(?:"
    # "can you keep hold of this for me: ferry booking ref is KX7-44QPL": what follows is to be kept
    r"(?:(?:can|could|would) you\s+)?(?:(?:please|pls|plz)\s+)?(?:keep hold of|hold on to|hang on to|keep|save|store|note|"
    r"remember|jot down|make a note of)\s+(?:this|these|that)(?:\s+for me)?(?:\s+please)?\s*[:\-\u2013\u2014]\s*|"
    r"(?:note to self|(?:(?:can|could|would|will) (?:you|u)\s+(?:please\s+|pls\s+)?)?(?:remember|note|keep in mind|make a note)"
    r"(?=\s+that\b|[,:])|remember|(?:a |one )?(?:quick |side )?note|keep in mind|don't forget|do not forget|"
    r"make a note|for your information)(?:\s+that)?[,:]?\s+|"
    # "Add that checkout is 10am": what is to go into a note is a statement too
    r"(?:add|mention|include|put in|say)\s+that\s+(?=\w+\s+\w+))",
    re.I)
_KEEP_THE = re.compile(r"^(?:(?:can|could|would) you\s+)?(?:(?:please|pls|plz)\s+)?(?:note|remember|save|keep|store|"
                       r"jot down|write down)\s+(?:the|my|our)\s+(?P<thing>[\w' -]{2,40}?),?\s+(?:it's|it is|which is)\s+"
                       r"(?P<value>\S.*)$", re.I)
# "29th it is", "Thursday it is then": the new day a proposal before it asked for, agreed
_AGREED = re.compile(r"^(?P<when>(?:the\s+)?\d{1,2}(?:st|nd|rd|th)|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|\d{1,2}(?::\d\d)?\s*(?:am|pm))"
                     r"\s+it\s+is\b(?:\s+then\b)?", re.I)
_PROPOSAL = re.compile(r"\binstead\b|\b(?:can|could|shall) we (?:do|move|make it|go for)\b|\b(?:how|what) about\b", re.I)
_UNMARKED_QUESTION = re.compile(r"^(?:what|where|when|why|how|who|which)\s+(?:do|does|did|is|are|was|were|can|could|"
                                r"should|would|will)\s+(?:i|you|we|they|he|she|it|the|my|your)\b", re.I)
_TO_DO = re.compile(r"^(?:please\s+)?(?:remember to|don't forget to|do not forget to|remind me to)\s+", re.I)

_RULE_WORDS = re.compile(r"\b(always|never|every time|whenever|from now on|at all times|by default|going forward|"
                         r"in (?:the )?future|unless|only|instead of|my time|(?:after|before) \d)", re.I)
_PROCEDURE_START = re.compile(r"^(?:to\s+\w+[^,]{0,60},|in order to\b|first,?\s|step \d|\d+[.)]\s)", re.I)
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) (?:you|u) (?:please |pls )?(?!be\b|have\b)[a-z]+\b|"  # "can you nag me": any verb asked
    r"(?:please |pls |can you |could you |would you )?(?:book|call|send|remind|tell|show|find|give|help|write|"
    r"check|schedule|set|add|make|create|update|delete|cancel|email|text|look|get|buy|order|play|read|"
    r"summari[sz]e|translate|explain|list|draft|search|open|close|turn|start|pick|bring|take|move|put|save|"
    r"print|fix|review|compare|recommend|suggest|plan|let's|lets|go|come|join|try|ask|wait|hold|keep|use|do|"
    r"gather|prepare|consider|follow|enjoy|stay|be|imagine|think|picture)(?![\w-])"  # not "take-home is"
    r"(?!(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had)\b))",  # "Book club is at Colm's": a noun, not a request
    re.I)


_CONTRACTED = re.compile(r"\w'(?:m|re|ve|ll|d)\b", re.I)


_MID_SENTENCE_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][\w.+#-]*")

_NO_LEAD = re.compile(r"^(?:no|nope|nah)\s*[,!.]\s+(?=\w)", re.I)


class RuleEngine:
    """Proposes memories from one conversation turn by rule (see the module docstring)."""

    name = "rules"
    memory_context: MemoryContext = "newest"

    def close(self) -> None:
        """Nothing to release: the rules hold no connection."""

    def _skipped(self, context: GenerationContext, speaker: str, why: str) -> Candidate:
        """The whole turn passed over (kept as its chunk, no memory), saying why."""
        turn = context.turn
        return self._candidate(_Draft(turn.text.strip(), turn.text, turn.text, 0.9, (f"skip:{why}",), (turn.turn_id,),
                                      store=False), _Turn(context, speaker, None, ()))

    def generate(self, context: GenerationContext) -> list[Candidate]:
        if not context.turn.text.strip():
            return []
        said = english_part(context.turn.text)  # judged as written: German "im" is no chat "I'm"
        speaker = display_name(context.turn.speaker)
        if not said:  # another language: the turn stays a chunk (the LLM path reads it)
            return [self._skipped(context, speaker, "not English")]
        if said != context.turn.text.strip():  # the English sentences of a mixed turn
            context = replace(context, turn=replace(context.turn, text=said))
        context = context.written_out()
        turn = context.turn
        if _is_assistant(turn):
            return [self._skipped(context, speaker, "assistant turn")]
        addressee = _addressee(context)
        known = tuple(dict.fromkeys(n for n in (speaker, addressee, *_speakers(context), *context.entities)
                                    if n and n != "the assistant"))
        texts = [turn.text, *(t.text for t in context.window)]
        info = _Turn(context, speaker, addressee, known,
                     frozenset(w for text in texts for w in _MID_SENTENCE_NAME.findall(text)) | set(known))
        units = [(c, n) for n, s in enumerate(split_sentences(turn.text)) for c in split_clauses(s, is_clause)]
        sentences = [c for c, _ in units]
        antecedents = recent_mentions(context, speaker)
        drafts: list[_Draft] = []
        i = 0
        if sentences and context.previous is not None:
            answer = sentences[0]
            answered = self._follow_up(info, answer, antecedents)
            if answered is not None:
                i = 1
                drafts += answered
        while i < len(units):
            # "mum's 60th dinner - I've booked Ottolenghi": the topic of the statement after it
            if topic := dash_topic(sentences, i, info.known, info.speaker, info.addressee, info.context.turn.text):
                draft, after = self._statement(info, sentences[i + 1], antecedents, sentences[:i + 1])
                if draft.store:
                    drafts.append(replace(draft, content=f"{topic}: {draft.content}"))
                    antecedents, i = after, i + 2
                    continue
            draft, antecedents = self._statement(info, sentences[i], antecedents, sentences[:i])
            i += 1
            if "correction" in draft.reasons and i < len(units) and units[i][1] == units[i - 1][1]:
                # "make that 10, I forgot my cousins": the rest of the sentence says why
                reason, after = self._statement(info, sentences[i], antecedents, sentences[:i])
                if reason.store:
                    draft, antecedents, i = _joined(draft, reason), after, i + 1
            if draft.store and drafts and drafts[-1].store and i >= 2 and units[i - 1][1] == units[i - 2][1] \
                    and _bridges(info, sentences[i - 1], draft):
                draft = replace(draft, reasons=draft.reasons + ("bridging",))
            drafts.append(draft)
        drafts = whole_turn(drafts, info)
        candidates, seen = [], set()
        for draft in drafts:
            candidate = self._candidate(draft, info)
            key = candidate.content.lower()
            if candidate.should_store and key in seen:
                continue
            seen.add(key)
            candidates.append(candidate)
        return candidates

    def _statement(self, info: _Turn, sentence: str, antecedents: tuple[Mention, ...],
                   before: Sequence[str] = ()) -> tuple[_Draft, tuple[Mention, ...]]:
        """One sentence of the turn as a draft; the people it mentions go on to the next sentence.
        `before` are the turn's sentences before it, where a corrected value was first said."""
        turn_ids = (info.context.turn.turn_id,)
        body = strip_padding(sentence, info.known).strip()
        def skip(why: str) -> tuple[_Draft, tuple[Mention, ...]]:
            # a question can name what the next sentence's "it" is ("... my dentist appointment? It's ...")
            named = find_mentions(body, info.speaker, info.addressee) if why == "question" else ()
            if why in {"question", "request"} and (told := _told_in_asking(body)):
                said = rewrite_persons(told, info.speaker, info.addressee).text
                return _Draft(said, sentence, told, 0.7, ("told in a question",), turn_ids), named or antecedents
            return _Draft(body, sentence, body, 0.9, (f"skip:{why}",), turn_ids, store=False), named or antecedents
        asked_to_keep = (remember := _REMEMBER.match(body)) and re.search(r"(?:that|[:,])\s*$", remember.group())
        if (body.endswith("?") or _UNMARKED_QUESTION.match(body)) and not asked_to_keep:
            return skip("question")  # "what do they actually check on an MOT anyway"; not "can you note that ...?"
        if is_small_talk(sentence.strip().rstrip(".!;:,- ")) or is_padding(sentence):
            return skip("small talk")
        body = body.rstrip("?.!;:,- ").strip()
        reasons: list[str] = []
        if corrected := _corrected(info, body, before):
            body, turn_ids = corrected
            reasons.append("correction")
        body = _NO_LEAD.sub("", body)
        body = without_heading(body)
        if (agreed := _AGREED.match(body)) and _PROPOSAL.search(info.context.previous.text if info.context.previous else ""):
            when = f"the {agreed['when']}" if re.match(r"\d+(?:st|nd|rd|th)$", agreed["when"]) else agreed["when"]
            body = f"it's moved to {when}{body[agreed.end():]}"  # "can we do the 29th instead?" / "29th it is"
            reasons.append("agreed change")
        if to_do := _TO_DO.match(body):
            doer = "I" if info.to_assistant or body.lower().startswith("remind me") else "you"
            body = f"{doer} need to {body[to_do.end():]}"
            reasons.append("explicit remember")
        elif kept := _KEEP_THE.match(body):  # "can you note the gate code, it's 4471#": the speaker's gate code
            body = f"my {kept['thing']} is {kept['value']}"
            reasons.append("explicit remember")
        elif remember := _REMEMBER.match(body):
            body = body[remember.end():]
            reasons.append("explicit remember")
        if not body or is_small_talk(body):
            return skip("small talk")
        prefix, confidence = "", 0.9
        to_assistant = info.addressee == "the assistant"
        if _RULE_START.match(body) or (to_assistant and re.match(r"^you (must|should|need to|have to)\b", body, re.I)) \
                or (_REQUEST.match(body) and _RULE_WORDS.search(body)):
            prefix, body = f"{possessive(info.speaker)} rule: ", _lower_first(body)
            reasons.append("rule")
        elif _PROCEDURE_START.match(body) or (classify_kind(body) == "procedure" and _REQUEST.match(body)):
            prefix, body = f"{possessive(info.speaker)} procedure: ", _lower_first(body)
            reasons.append("procedure")
        elif _REQUEST.match(body) or re.match(r"^please\s+\w+", body, re.I) or (
                re.search(r"\bplease$", body, re.I) and not _has_verb(body)):
            return skip("request")  # "examples in Python please": what is wanted, not a fact
        elif is_advice(body):
            return skip("advice")
        else:
            body, added = _with_subject(body)
            if added:
                confidence -= 0.1
                reasons.append("subject supplied")
        if len(expand_is(body).split()) + len(_CONTRACTED.findall(body)) < 3:
            return skip("too short")  # "Fun!", "Alex!"; "I'm vegan", "Lisbon's off" count as the three words they become
        owned = _owned_by_speaker(body, info.speaker, info.known, info.to_assistant)
        body = expand_is(_mine_named_before(owned, before))
        body = with_allergen(body, info.context.turn.text)
        rewrite = rewrite_persons(body, info.speaker, info.addressee, antecedents)
        content = prefix + rewrite.text
        has_detail = _has_detail(info, rewrite.text)
        if not prefix:
            content, personal = _reshaped(info, body, content, rewrite, has_detail)
            why = _not_worth_keeping(info, body, content, personal, has_detail)
            if why:
                return skip(why)
        confidence, person_reasons = _person_confidence(rewrite, confidence)
        draft = _Draft(content, sentence, prefix + body, confidence, tuple(reasons) + person_reasons, turn_ids)
        return draft, rewrite.mentions

    def _follow_up(self, info: _Turn, answer: str, antecedents: tuple[Mention, ...]) -> list[_Draft] | None:
        """The first sentence of a turn read with the question that the previous turn ended on."""
        previous = info.context.previous
        assert previous is not None
        questions = split_sentences(previous.text)
        if not questions or not questions[-1].endswith("?") or previous.speaker == info.context.turn.speaker:
            return None
        window = info.context.window
        if window and window[-1].turn_id != previous.turn_id:
            return None  # the question was answered already, by this speaker's turn in between
        if not is_polar(answer) and is_small_talk(strip_padding(answer, info.known).rstrip(".!?,; ")):
            return None  # "Thanks, Melanie!" answers nothing; the next sentences stand on their own
        if _owned_by_speaker(answer, info.speaker, info.known, info.to_assistant) != answer:
            return None  # "What are your biggest costs?" / "rent's £1,150": a statement of the speaker's own thing
        if allergy := allergy_answer(questions[-1], strip_padding(first_said(info.context.turn.text), info.known)):
            return [self._statement(info, allergy, antecedents)[0]]
        asker = "the assistant" if _is_assistant(previous) else display_name(previous.speaker)
        question = asked_of(info.speaker, strip_padding(questions[-1], info.known))
        reply = re.sub(r"^(?:(?:oh+|um+|uh+|hmm+|well|haha+|lol|ah+|sadly|unfortunately|luckily|thankfully|honestly|"
                       r"actually|surprisingly|happily|wait|hold on|sorry)\b[\s,.!]*)+", "",
                   answer.strip() if is_polar(answer) or reports_done(answer) else strip_padding(answer, info.known), flags=re.I)
        if not re.search(r"\w", reply):
            return None  # "Wait, ...": not an answer
        follow = merge(question, reply)
        if follow is None:
            return None
        if not follow.segments:  # the answer stands alone once the question's topic is put in it
            return [self._statement(info, follow.leftover or "", antecedents)[0]]
        turn_ids: tuple[str, ...] = (previous.turn_id, info.context.turn.turn_id)
        content = _render_segments(follow, info.speaker, asker, antecedents)
        confidence = {"wh": 0.7, "how-to": 0.7, "yes": 0.75, "no": 0.75, "choice": 0.75, "clause": 0.75,
                      "topic": 0.6}[follow.mode]
        if follow.mode == "clause":
            own = rewrite_persons(_with_subject(follow.leftover or "")[0], info.speaker, asker, antecedents).text
            content = _merge_clause(content, own)
            if content is None:
                return None
        elif follow.mode == "topic":
            topic = self._topic(info, previous)
            if topic is None:
                return None
            content, turn_ids = refined(topic.content, content) or topic.content.rstrip(".!") + content, \
                topic.turn_ids + turn_ids
        place = None
        if is_going_without_place(question):  # "When are you going?": where to was said before
            place = destination([info.context.turn.text, *(t.text for t in reversed(info.context.window))],
                                info.known)
        if place and follow.mode != "no" and is_going_without_place(content):  # not "not going to Japan alone"
            content = with_destination(content, place)
        if (they := re.match(r"^they\b", content, re.I)) and (things := they_asked_about(info.context, previous)):
            content = f"{things}{content[they.end():]}"  # "I keep forgetting the bins" / "Which day are they collected?"
        if re.match(r"^the\s+[a-z]", content, re.I) and not _names_someone(info, content, asker):
            # "What time are the lessons?" after "my daughter Ida starts violin lessons": Ida's; else the answerer's
            content = the_thing_asked(content, info.context.memories) or f"{possessive(info.speaker)} {content[4:]}"
        drafts = []
        pointed = re.match(r"^(this|that|these|those|it)\b", content, re.I)  # "Is this your painting?": a photo
        if not pointed or _has_detail(info, content):
            if _PRONOUN_START.match(content):
                confidence -= 0.2  # "It was not Leo's first marathon": the subject is still a pronoun
            drafts.append(_Draft(content, f"{question} {answer}", content, confidence, (f"follow-up:{follow.mode}",),
                                 turn_ids))
        if follow.leftover and follow.mode != "clause":  # its pronouns point into the answer before it first
            said = find_mentions(reply.partition(follow.leftover)[0], info.speaker, info.addressee)
            leftover, _ = self._statement(info, follow.leftover, said or antecedents)
            if place and leftover.store and is_going_without_place(leftover.content):
                leftover = replace(leftover, content=with_destination(leftover.content, place))  # "Ben is coming"
            drafts.append(leftover)
        return drafts

    def _topic(self, info: _Turn, previous: TurnView) -> _Draft | None:
        """For an elliptic question ("When?"): the answerer's last statement before it. A request to find
        something is what they want: "how many nights?" after "can you find a ryokan in Hakone?"."""
        window = info.context.window
        speaker = info.context.turn.speaker
        before = [t for t in window if t.turn_id != previous.turn_id and t.speaker == speaker]
        if not before:
            return None
        source = before[-1]
        other = _Turn(replace(info.context, turn=source, previous=None), info.speaker, info.addressee, info.known)
        antecedents: tuple[Mention, ...] = ()
        found = None
        for sentence in split_sentences(source.text):
            for clause in split_clauses(sentence, is_clause):
                draft, antecedents = self._statement(other, clause, antecedents)
                if draft.store:
                    found = draft
        return replace(found, turn_ids=(source.turn_id,)) if found else None

    def _candidate(self, draft: _Draft, info: _Turn) -> Candidate:
        context = info.context
        if not draft.store:  # kept for the record of what was passed over; no event time to work out
            return Candidate(False, _finish(draft.content), classify_kind(draft.kind_text), draft.confidence,
                             fast_score(draft.source), draft.turn_ids, observed_at=context.now, reasons=draft.reasons)
        resolved = resolve_dates(draft.content, context.now)
        content = _finish(resolved.text)
        kind: MemoryKind = "procedure" if {"follow-up:how-to", "procedure"} & set(draft.reasons) else \
            "rule" if "rule" in draft.reasons else _kind(draft.kind_text, resolved if ONE_CHANGE not in draft.reasons
                                                         else resolve_dates(draft.kind_text, context.now), context.now)
        salience = max(fast_score(draft.source), fast_score(content)) + (0.15 if kind == "rule" else 0.0)
        reasons = draft.reasons + tuple(f"date:{t.phrase}" for t in resolved.times)
        return Candidate(
            should_store=draft.store, content=content, kind=kind,
            confidence=round(max(0.3, min(1.0, draft.confidence)), 2),
            salience=round(min(1.0, salience), 3), source_turn_ids=draft.turn_ids,
            entities=find_entities(content, info.known), observed_at=context.now,
            event_start_at=resolved.start, event_end_at=resolved.end, temporal_text=resolved.temporal_text,
            reasons=reasons,
        )


def _addressee(context: GenerationContext) -> str | None:
    """Who "you" is: the previous speaker, else the latest other speaker in the window."""
    other = context.previous or next((t for t in reversed(context.window) if t.speaker != context.turn.speaker), None)
    if other is None:
        return None
    return "the assistant" if _is_assistant(other) else display_name(other.speaker)


def _speakers(context: GenerationContext) -> list[str]:
    return [display_name(t.speaker) for t in context.window if not _is_assistant(t)]
