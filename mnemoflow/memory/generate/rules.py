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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from mnemoflow.memory.generate.candidates import Candidate, GenerationContext, MemoryContext, TurnView
from mnemoflow.memory.english.coref import (
    NOT_NAMES,
    Mention,
    Rewrite,
    find_mentions,
    possessive,
    rewrite_persons,
)
from mnemoflow.memory.generate.direct import classify_kind
from mnemoflow.memory.generate.followup import (
    FollowUp,
    destination,
    is_clause,
    is_going_without_place,
    is_polar,
    merge,
    with_destination,
)
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.sentences import split_clauses, split_sentences, strip_padding
from mnemoflow.memory.english.smalltalk import is_advice, is_feeling, is_small_talk
from mnemoflow.memory.english.temporal import MONTHS, Resolution, resolve_dates
from mnemoflow.memory.english.verbs import PAST_FORMS, is_adverb, is_past
from mnemoflow.models import MemoryKind
from mnemoflow.scoring import fast_score

_ASSISTANT_NAMES = frozenset({"assistant", "ai", "bot", "agent", "system", "chatbot"})
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:(?:remember|(?:a |one )?(?:quick |side )?note|keep in mind|don't forget|do not forget|"
    r"make a note|for the records?|"
    r"just so you know|fyi|for your information|note to self)(?:\s+that)?[,:]?\s+)", re.I)
# "..., remember, ...", "as I said, ...": the speaker says the listener was told this before
_SAID_BEFORE = re.compile(r"(?:^|,\s*)(?:remember|as i (?:said|mentioned|told you)|like i (?:said|mentioned|told you))"
                          r"(?: before| earlier| already)?(?=\s*,|\s*$)", re.I)
_TO_DO = re.compile(r"^(?:please\s+)?(?:remember to|don't forget to|do not forget to|remind me to)\s+", re.I)
_RULE_START = re.compile(
    r"^(?:please\s+)?(?:always|never|don't|do not|don't ever|do not ever|make sure|be sure|from now on|avoid|"
    r"no more|stop)\b", re.I)
_RULE_WORDS = re.compile(r"\b(always|never|every time|whenever|from now on|at all times|by default|going forward|"
                         r"in (?:the )?future|unless|only|instead of|my time|(?:after|before) \d)", re.I)
_PROCEDURE_START = re.compile(r"^(?:to\s+\w+[^,]{0,60},|in order to\b|first,?\s|step \d|\d+[.)]\s)", re.I)
_REQUEST = re.compile(
    r"^(?:please |pls |can you |could you |would you )?(?:book|call|send|remind|tell|show|find|give|help|write|"
    r"check|schedule|set|add|make|create|update|delete|cancel|email|text|look|get|buy|order|play|read|"
    r"summari[sz]e|translate|explain|list|draft|search|open|close|turn|start|pick|bring|take|move|put|save|"
    r"print|fix|review|compare|recommend|suggest|plan|let's|lets|go|come|join|try|ask|wait|hold|keep|use|do|"
    r"gather|prepare|consider|follow|enjoy|stay|be|imagine|think|picture)\b",
    re.I)
_STEP = re.compile(r"^\d+[.)]\s+")
_PREFERENCE_VERB = re.compile(r"\b(?:prefers?|likes?|loves?|enjoys?|hates?|dislikes?|favou?rite)\b", re.I)
_PRESCRIPTIVE = re.compile(r"'s rule:|\b(?:must|should|have to|has to|not allowed|policy|don't|do not)\b", re.I)
_STANDING_RULE = re.compile(r"(?:^|[:;]\s*)(?:every|all|each|no)\s+[\w-]+(?:\s+[\w-]+)?\s+"
                            r"(?:needs?|must|has to|have to|requires?|gets?)\b", re.I)
_PREFERENCE_WORDS = re.compile(r"\b(?:vegetarian|vegan|pescatarian|kosher|halal|gluten-free|lactose|teetotal|"
                               r"favou?rite|usual (?:order|drink|coffee)|main (?:programming )?language|"
                               r"would (?:like|love)|wants?|fan of|into)\b", re.I)
_BARE_YES = re.compile(r"^\W*(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely|totally|indeed|correct)\W*$",
                       re.I)
_TAG_STATEMENT = re.compile(r",\s*(?:no|right|isn't it|didn't (?:you|i|we)|don't you think|wasn't it|aren't they)\?$",
                            re.I)
# ", who's in?" after a statement invites people to it; the statement before it still stands.
_INVITATION_TAIL = re.compile(r",\s*(?:who's in|who is in|who's coming|who wants to (?:come|join)|anyone (?:in|keen|"
                              r"interested|up for it|want to (?:come|join))|any takers|you in|are you in)\?$", re.I)
_ASKING = re.compile(r"^(?:who|what|when|where|why|how|which|do|does|did|is|are|was|were|can|could|would|will|"
                     r"should|shall|have|has)\b", re.I)
# what an invitation's statement organises: "I'm organizing the team dinner on November 8"
_ORGANISED = re.compile(r"\b(?:organi[sz]ing|hosting|planning|throwing|having) (?P<event>(?:the|a|an|our|my) [^,?;]+)$",
                        re.I)
_ACCEPTS = re.compile(r"^(?:count me in|i'm in|i am in|sign me up|i'll (?:be there|come)|i'm (?:coming|down))\W*$",
                      re.I)
_SAID_AS_QUESTION = re.compile(r"^(?:I|we)\s+(?:just\s+|already\s+)?[a-z]+ed\b")  # "I booked Bar Centrale for Friday?"
_SUBORDINATE_ONLY = re.compile(r"^(?:even if|if|when|whenever|since|because|although|though|while|after|before|"
                               r"unless|until|as soon as)\s+(?:I|we|you|he|she|they|it|my|our|the|this|that)\b[^,]*$",
                               re.I)
_CONTRACTED = re.compile(r"\w'(?:m|re|ve|ll|d)\b", re.I)
_AS_A = re.compile(r"^as (an? [\w-]+(?: [\w-]+)?),", re.I)
_NOT_ANYMORE = re.compile(r"^\W*(?:(?:no|nope|nah)\W+)?(?:not any ?more|no longer|not these days|not now)\W*$", re.I)
_POLAR_LEAD = re.compile(r"^(?:yes|no|yeah|nope)[,.!]*\s+", re.I)
_WOULD_BE_NICE = re.compile(r"^(?:and |also )?(?P<what>.+?)\s+would be (?:lovely|great|nice|perfect|ideal|good|amazing|"
                            r"awesome|fantastic|wonderful|a dream|fun|helpful|appreciated)$", re.I)
_OBLIGATION = re.compile(r"\b(must|must not|needs? to|has to|have to|not allowed)\b", re.I)
_FIND = re.compile(r"^(?:please\s+)?(?:find|get|book|arrange|order)\s+(?:me\s+|us\s+)?(?=(?:a|an|some|two|three)\s)",
                   re.I)
_VAGUE = re.compile(r"\b(it|that|this|those|them|there|one|these|stuff|things?)\b", re.I)
_OBJECT_IT = re.compile(r"(?<=[a-z] )it\b(?!\s*(?:is|was|will|has|had|'s)\b)")  # "take it black", not "it is"
_NAMED_THING = re.compile(r"^\W*(?:(?:yes|yeah|yep|yup|sure|no|nope)\W+)?(?:a|an|the|my|our|some)\s+"
                          r"(?P<thing>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,3}?)\s*(?:,|[.!]?$)", re.I)
_RULE_WITH_VALUE = re.compile(r"^(?P<rule>.*?\b(?P<thing>(?:the|our|my)\s+(?:[a-z-]+\s+){0,2}[a-z-]+)),\s+"
                              r"(?:it's|it is)\s+(?P<value>(?:at\s+)?\d.*?)[.!]?$", re.I)
_PRONOUN_START = re.compile(r"^(it|that|this|they|he|she|there|those|these|their|its|his|her|them)\b", re.I)
_LISTENER_START = re.compile(r"^(you|you're|you've|you'll|you'd|your|yours)\b", re.I)
_RELATIVE_START = re.compile(r"^(which|who|whom|whose|where|whereas)\b", re.I)
_GERUND_SUBJECT = re.compile(r"^[a-z]+ing\b(?:'s|[^,.;]*?\b(?:is|are|was|were|isn't|aren't|looks|sounds|seems|"
                             r"makes|keeps|helps|gives|takes|feels|brings|can|will|has|means)\b)", re.I)
_PLAN_GERUNDS = frozenset({"moving", "going", "starting", "planning", "heading", "flying", "leaving", "visiting",
                           "working", "studying", "learning", "training", "thinking", "trying", "looking", "getting",
                           "researching", "writing", "building", "applying", "preparing", "saving", "launching",
                           "joining", "quitting", "switching", "traveling", "travelling", "hoping", "coming"})
_MID_SENTENCE_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][\w.+#-]*")
_GERUND_START = re.compile(r"^(?:(?P<adverb>just|finally|also|still|currently|now|really) )?[a-z]+ing\b")
_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|had|will|would|can|could|does|do|did|must|should|shall|may|"
                     r"might)(?:n't)?\b(?!-)", re.I)  # not "a must-see"
_PREFERENCE_START = re.compile(r"^(?:really |totally |absolutely )?(?:love|like|hate|enjoy|prefer|adore|need|want)\b",
                               re.I)
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "our", "his", "her", "their", "its", "this", "that", "some",
                          "many", "few", "all", "these", "those"})
_STATE_WORDS = frozenset({"based", "located", "married", "engaged", "used", "supposed", "excited", "interested"})
# A value said on its own: "$135,000", "11:15", "10 mg", "8", "20%", "9am".
_AMOUNT = re.compile(r"(?<![\w$\u20ac\u00a3:.,/-])(?P<amount>[$\u20ac\u00a3]\s?\d[\d,]*(?:\.\d+)?k?|"
                     r"\d{1,2}:\d\d(?:\s?[ap]m)?|\d{1,2}\s?[ap]m|\d[\d,]*(?:\.\d+)?%?)(?![\w:/-]|[.,]\d)"
                     r"(?:\s+(?P<unit>[a-z]+)\b)?", re.I)
_NOT_UNITS = frozenset({"a", "an", "the", "and", "or", "for", "of", "on", "at", "in", "to", "with", "by", "from",
                        "per", "each", "is", "are", "was", "were", "now", "then", "though", "instead", "actually",
                        "base", "too", "so", "but", "if", "when", "before", "after", "until", "this", "that"})
# "make that 10", "it's 10 mg", "no, it's 11:15 actually": a value that replaces the one said before.
_SET_VALUE = re.compile(r"^(?:make (?:that|it)|it'?s|it is|that'?s|that is|it should be|should be|it was)\s+"
                        r"(?:actually\s+|now\s+|more like\s+)?(?P<value>.+?)(?:\s+(?:now|actually|instead))?$", re.I)
# "The confirmation email says 11:15": another source for the same thing, with its own value.
_REPORT = re.compile(r"\b(?:says|said|shows|showed|lists|listed|states|stated|reads)\s+(?:that\s+)?", re.I)
# "Me.", "That's me.": an answer that only names the speaker; what follows says what they do.
_SELF_ANSWER = re.compile(r"^\W*(?:me|us|myself|i do|i am|i will|that's me|that would be me)\W*$", re.I)
# "She starts in the fall": a sentence that only adds when or where, leaning on what was just answered.
_ONLY_WHEN_OR_WHERE = re.compile(r"^(?:i|we|he|she|they)(?:'s|'re|'m|'ll| is| are| am| will)?\s+(?:\w+ly\s+)?[a-z]+\s+"
                                 r"(?:in|on|at|next|this|from|by|until|around|early|late|tomorrow|today|tonight)\b",
                                 re.I)
# "Can you find a ryokan in Hakone?": a request that says what the speaker needs.
_ASK_TO_FIND = re.compile(r"^(?:can|could|would|will) you\s+(?:please\s+)?(?:find|get|book|arrange|order|recommend|"
                          r"suggest)\s+(?:me\s+|us\s+)?(?=(?:a|an|some)\s)", re.I)
# "my two children, Ella and Sam": who the speaker's people are, said in passing.
_KIN_NAMED = re.compile(r"\bmy\s+(?P<kin>(?:(?:two|three|four|\d|twin|older|younger|little|big|baby)\s+)?"
                        r"(?:kids|children|sons|daughters|sisters|brothers|twins|son|daughter|sister|brother|wife|"
                        r"husband|partner|fianc\u00e9e?|fiancee?))(?:,\s*|\s+)"
                        r"(?P<names>[A-Z][a-z]+(?:(?:,\s*|,?\s+and\s+)[A-Z][a-z]+)*)\b(?!')")
# "Double espresso, every morning": a habit.
_ROUTINE = re.compile(r"\b(?:every|each)\s+(?:morning|evening|night|day|weekday|week|month)\b|\b(?:daily|weekly)\b",
                      re.I)
# "Any good climbing gyms near me?": what the speaker is looking for.
_LOOKING_FOR = re.compile(r"^(?:and |so )?(?:any|are there any|do you know any|know any)\s+"
                          r"(?P<what>(?:good |nice |decent )?[a-z][\w -]*?)\s+"
                          r"(?P<where>near me|nearby|close by|around here|near (?:my|our) \w+)\?$", re.I)
# "No, billing still runs on the old cluster": what is said instead.
# "... when you book the sync with Berlin": what the assistant is to do with a fact, not part of it.
_FOR_THE_ASSISTANT = re.compile(r",?\s+(?:when|whenever|while|if|before|once)\s+you\s+(?!were\b|are\b|said\b)\w+\b.*$",
                                re.I)
_NO_LEAD = re.compile(r"^(?:no|nope|nah)\s*[,!.]\s+(?=\w)", re.I)
_MONTH_BEFORE = re.compile(r"\b(?:" + "|".join(MONTHS) + r")\.?\s*$", re.I)
# "Marco's wedding cake is ...": a capitalised word owning the subject noun, a verb after it, is a name even at
# the start of a sentence (a common noun would take "the"; "Work's been crazy" is "is", not a possessive).
_POSSESSOR_SUBJECT = re.compile(r"^[A-Z][a-z]+'s (?:[a-z]+ ){1,3}(?:is|are|was|were|will|has|had)\b")
_FIRST_OR_SECOND = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|we|we're|we've|us|our|you|you're|your)\b", re.I)


@dataclass(frozen=True)
class _Turn:
    """What every sentence of one turn is judged with."""

    context: GenerationContext
    speaker: str
    addressee: str | None
    known: tuple[str, ...]  # names the scope or the conversation already has
    seen: frozenset[str] = frozenset()  # words written capitalised mid-sentence nearby: names, not sentence starts


@dataclass(frozen=True)
class _Draft:
    """A statement on its way to a candidate: rewritten text and how sure each rewrite was."""

    content: str
    source: str  # the words it came from, for salience
    kind_text: str  # the words the kind is judged on (before dates are rewritten)
    confidence: float
    reasons: tuple[str, ...]
    turn_ids: tuple[str, ...]
    store: bool = True


class RuleEngine:
    """Proposes memories from one conversation turn by rule (see the module docstring)."""

    name = "rules"
    memory_context: MemoryContext = "newest"

    def close(self) -> None:
        """Nothing to release: the rules hold no connection."""

    def generate(self, context: GenerationContext) -> list[Candidate]:
        turn = context.turn
        if not turn.text.strip():
            return []
        speaker = display_name(turn.speaker)
        if _is_assistant(turn):
            return [self._candidate(_Draft(turn.text.strip(), turn.text, turn.text, 0.9, ("skip:assistant turn",),
                                           (turn.turn_id,), store=False), _Turn(context, speaker, None, ()))]
        addressee = _addressee(context)
        known = tuple(dict.fromkeys(n for n in (speaker, addressee, *_speakers(context), *context.entities)
                                    if n and n != "the assistant"))
        texts = [turn.text, *(t.text for t in context.window)]
        info = _Turn(context, speaker, addressee, known,
                     frozenset(w for text in texts for w in _MID_SENTENCE_NAME.findall(text)) | set(known))
        units = [(u, n) for n, s in enumerate(split_sentences(turn.text)) for c in split_clauses(s, is_clause)
                 for u in _rule_and_its_value(c)]
        sentences = [c for c, _ in units]
        steps = [s for s in sentences if _STEP.match(s)]
        if len(steps) >= 2:
            return [self._candidate(self._procedure_list(info, sentences, steps), info)]
        antecedents = _recent_mentions(context, speaker)
        drafts: list[_Draft] = []
        i = 0
        if sentences and context.previous is not None:
            answer = sentences[0]
            answered = self._follow_up(info, answer, antecedents)
            if answered is not None:
                i = 1
                if len(answered) == 1 and len(sentences) > 1 and _may_go_on(answered[0], answer, sentences[1]):
                    detail, antecedents = self._statement(info, sentences[1], antecedents, sentences[:1])
                    if detail.store and _goes_on(answered[0], detail):
                        answered, i = [_joined(answered[0], detail)], 2
                drafts += answered
        while i < len(units):
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
        if sentences and _NOT_ANYMORE.match(sentences[0]) and context.previous is not None:
            drafts = _one_change(drafts, info)
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
        if body.endswith("?") and (_TAG_STATEMENT.search(body) or _SAID_AS_QUESTION.match(body)):
            body = _TAG_STATEMENT.sub("", body).rstrip("?")  # "Pepper sees Dr. Chen now, no?" asserts it
        elif body.endswith("?") and (invite := _INVITATION_TAIL.search(body)) and not _ASKING.match(body):
            body = body[:invite.start()]  # "I'm organizing the team dinner on November 8, who's in?" states the plan
        elif body.endswith("?") and (role := _AS_A.match(body)):
            body = f"I'm {role.group(1)}"  # "As a vegetarian, what can I grill?" says who is asking
        if body.endswith("?"):
            return skip("question")
        if is_small_talk(sentence.strip().rstrip(".!;:,- ")):
            return skip("small talk")
        body = body.rstrip(".!;:,- ").strip()
        reasons: list[str] = []
        if corrected := _corrected(info, body, before):
            body, turn_ids = corrected
            reasons.append("correction")
        body = _NO_LEAD.sub("", body)
        if to_do := _TO_DO.match(body):
            doer = "I" if info.addressee in (None, "the assistant") or body.lower().startswith("remind me") else "you"
            body = f"{doer} need to {body[to_do.end():]}"
            reasons.append("explicit remember")
        elif remember := _REMEMBER.match(body):
            body = body[remember.end():]
            reasons.append("explicit remember")
        if said_before := _SAID_BEFORE.search(body):  # "..., remember, because of my allergy": told before
            body = (body[:said_before.start()] + body[said_before.end():]).strip(" ,")
            reasons.append("reminder")
        if not body or is_small_talk(body):
            return skip("small talk")
        if _RELATIVE_START.match(body) or _SUBORDINATE_ONLY.match(body):
            return skip("fragment")  # "which refreshes me", "since we last chatted": no statement of its own
        prefix, confidence = "", 0.9
        to_assistant = info.addressee == "the assistant"
        if _RULE_START.match(body) or (to_assistant and re.match(r"^you (must|should|need to|have to)\b", body, re.I)) \
                or (_REQUEST.match(body) and _RULE_WORDS.search(body)):
            prefix, body = f"{possessive(info.speaker)} rule: ", _lower_first(body)
            reasons.append("rule")
        elif _PROCEDURE_START.match(body) or (classify_kind(body) == "procedure" and _REQUEST.match(body)):
            prefix, body = f"{possessive(info.speaker)} procedure: ", _lower_first(body)
            reasons.append("procedure")
        elif (find := _FIND.match(body)) and _has_detail(info, body):
            body = "I need " + body[find.end():]  # "Find a cat sitter for the week of October 9"
        elif _REQUEST.match(body) or re.match(r"^please\s+\w+", body, re.I) or (
                re.search(r"\bplease$", body, re.I) and not _has_verb(body)):
            return skip("request")  # "examples in Python please": what is wanted, not a fact
        elif is_advice(body):
            return skip("advice")
        elif (wish := _WOULD_BE_NICE.match(body)) and not _PRONOUN_START.match(wish["what"]):
            body = f"I would like {_lower_first(wish['what'])}"  # "Somewhere with fado would be lovely"
        else:
            if info.addressee in (None, "the assistant") and not _LISTENER_START.match(body):
                body = _FOR_THE_ASSISTANT.sub("", body)  # "I'm on Pacific time when you book the sync"
            body, added = _with_subject(body)
            if added:
                confidence -= 0.1
                reasons.append("subject supplied")
        if len(body.split()) + len(_CONTRACTED.findall(body)) < 3:
            return skip("too short")  # "Fun!", "Alex!"; "I'm vegan" counts as the three words it becomes
        body = _it_named_before(body, before)
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
        if (accepted := _accepted(info, previous, questions[-1], answer)) is not None:
            return [accepted]
        if not is_polar(answer) and is_small_talk(strip_padding(answer, info.known).rstrip(".!?,; ")):
            return None  # "Thanks, Melanie!" answers nothing; the next sentences stand on their own
        asker = "the assistant" if _is_assistant(previous) else display_name(previous.speaker)
        question = strip_padding(questions[-1], info.known)
        reply = re.sub(r"^(?:(?:oh+|um+|uh+|hmm+|well|haha+|lol|ah+|sadly|unfortunately|luckily|thankfully|honestly|"
                       r"actually|surprisingly|happily|wait|hold on|sorry)\b[\s,.!]*)+", "", answer.strip(), flags=re.I)
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
            content, turn_ids = topic.content.rstrip(".!") + content, topic.turn_ids + turn_ids
        place = None
        if is_going_without_place(question):  # "When are you going?": where to was said before
            place = destination([info.context.turn.text, *(t.text for t in reversed(info.context.window))],
                                info.known)
        if place and follow.mode != "no" and is_going_without_place(content):  # not "not going to Japan alone"
            content = with_destination(content, place)
        if re.match(r"^the\s+[a-z]", content, re.I) and not _names_someone(info, content, asker):
            content = f"{possessive(info.speaker)} {content[4:]}"  # "How often are the sessions?" asked of Paolo
        drafts = []
        pointed = re.match(r"^(this|that|these|those|it)\b", content, re.I)  # "Is this your painting?": a photo
        if not pointed or _has_detail(info, content):
            if _PRONOUN_START.match(content):
                confidence -= 0.2  # "It was not Leo's first marathon": the subject is still a pronoun
            drafts.append(_Draft(content, f"{question} {answer}", content, confidence, (f"follow-up:{follow.mode}",),
                                 turn_ids))
        if follow.leftover and follow.mode != "clause":
            leftover, _ = self._statement(info, follow.leftover, antecedents)
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
                if asked := _ASK_TO_FIND.match(clause):
                    clause = "I need " + clause[asked.end():].rstrip("?")
                draft, antecedents = self._statement(other, clause, antecedents)
                if draft.store:
                    found = draft
        return replace(found, turn_ids=(source.turn_id,)) if found else None

    def _procedure_list(self, info: _Turn, sentences: Sequence[str], steps: Sequence[str]) -> _Draft:
        """A numbered list of steps is one procedure: "Kim's procedure to release: bump ...; run ..."."""
        header = next((s for s in sentences if s.endswith(":") and not _STEP.match(s)), "")
        title = " " + _lower_first(header.rstrip(":").strip()) if header else ""
        body = "; ".join(_STEP.sub("", s).rstrip(".;") for s in steps)
        said = f"{possessive(info.speaker)} procedure{title}: {body}"
        content = rewrite_persons(said, info.speaker, info.addressee).text
        turn = info.context.turn
        return _Draft(content, turn.text, turn.text, 0.85, ("procedure", "numbered steps"), (turn.turn_id,))

    def _candidate(self, draft: _Draft, info: _Turn) -> Candidate:
        context = info.context
        if not draft.store:  # kept for the record of what was passed over; no event time to work out
            return Candidate(False, _finish(draft.content), classify_kind(draft.kind_text), draft.confidence,
                             fast_score(draft.source), draft.turn_ids, observed_at=context.now, reasons=draft.reasons)
        resolved = resolve_dates(draft.content, context.now)
        content = _finish(resolved.text)
        kind: MemoryKind = "procedure" if {"follow-up:how-to", "procedure"} & set(draft.reasons) else \
            "rule" if "rule" in draft.reasons else _kind(draft.kind_text, resolved, context.now)
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


@dataclass(frozen=True)
class _Value:
    """A value in a sentence: where its amount is, and what it measures."""

    start: int
    end: int  # the end of the amount; a unit after it stays as said
    amount: str
    kind: str  # "money", "time", "percent", the unit ("mg", "night"), or "" for a bare number


def _values(text: str) -> list[_Value]:
    """The values in `text`, not counting years or days of a month ("September 5")."""
    found = []
    for m in _AMOUNT.finditer(text):
        amount, unit = m["amount"], (m["unit"] or "").lower()
        unit = "" if unit in _NOT_UNITS or unit.capitalize() in MONTHS else unit
        if amount[0] in "$\u20ac\u00a3":
            kind = "money"
        elif ":" in amount or amount.lower().endswith(("am", "pm")):
            kind = "time"
        elif amount.endswith("%"):
            kind = "percent"
        elif (re.fullmatch(r"(?:19|20)\d\d", amount) and not unit) or _MONTH_BEFORE.search(text[:m.start()]):
            continue
        else:
            kind = unit.removesuffix("s")
        found.append(_Value(m.start("amount"), m.end("amount"), amount, kind))
    return found


def _same_kind(new: _Value, old: _Value) -> bool:
    """A bare number can stand for any count ("make that 10" after "we're 8"); anything else must match."""
    if new.kind == "":
        return old.kind not in {"money", "time", "percent"}
    return new.kind == old.kind


def _corrected(info: _Turn, body: str, before: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """A value said in place of one said just before, as the earlier statement with the new value, and the
    turns it comes from: "make that 10" after "We're 8 for Sunday lunch" is "We're 10 for Sunday lunch";
    "The email says 11:15" after "The app says my flight leaves at 10:40" is "The email says my flight
    leaves at 11:15". None when the value stands alone or no earlier statement has exactly one like it."""
    source = ""
    if said := _SET_VALUE.match(body):
        value_text = said["value"]
    else:
        reports = list(_REPORT.finditer(body))
        if not reports:
            return None
        source, value_text = body[:reports[-1].end()].strip(), body[reports[-1].end():]
    values = _values(value_text)
    if len(values) != 1 or not (whole := _AMOUNT.fullmatch(value_text.strip())):
        return None
    new = values[0]
    if whole["unit"] and new.kind == "" and whole["unit"].lower() not in _NOT_UNITS:
        return None  # "it's 5 September" is a date, not a count
    turn = info.context.turn
    earlier = [(clause, turn) for clause in reversed(before)]
    for previous in reversed(info.context.window):
        if not _is_assistant(previous):
            clauses = [c for sentence in split_sentences(previous.text) for c in split_clauses(sentence, is_clause)]
            earlier += [(clause, previous) for clause in reversed(clauses)]
    for clause, said_in in earlier:
        clause = strip_padding(clause, info.known).rstrip(".!;:,- ")
        if clause.endswith("?") or (said_in.speaker != turn.speaker and _FIRST_OR_SECOND.search(clause)):
            continue
        like = [v for v in _values(clause) if _same_kind(new, v)]
        if len(like) != 1:
            continue
        old = like[0]
        text = clause[:old.start] + new.amount + clause[old.end:]
        if source:  # the new source says what the old one said, with its own value
            verbs = [m for m in _REPORT.finditer(text) if m.end() <= old.start]
            text = f"{source} {text[verbs[-1].end():] if verbs else _lower_first(text)}"
        return text, tuple(dict.fromkeys((said_in.turn_id, turn.turn_id)))
    return None


def _accepted(info: _Turn, previous: TurnView, invitation: str, answer: str) -> _Draft | None:
    """"Count me in!" answering "I'm organizing the team dinner on November 8, who's in?": the answerer is
    coming to what the inviter organises (a guest of a meal is what its diet and seating rules need)."""
    tail = _INVITATION_TAIL.search(invitation)
    plan = _ORGANISED.search(invitation[:tail.start()]) if tail else None
    if plan is None or not _ACCEPTS.match(answer.strip()) or _ASKING.match(invitation):
        return None
    event = re.sub(r"^(?:a|an|our) ", "the ", plan["event"].strip())
    event = re.sub(r"^my ", possessive(display_name(previous.speaker)) + " ", event)
    content = f"{info.speaker} is coming to {event}"
    return _Draft(content, f"{invitation} {answer}", content, 0.75, ("follow-up:invitation",),
                  (previous.turn_id, info.context.turn.turn_id))


def _may_go_on(answered: _Draft, answer: str, following: str) -> bool:
    """Whether the sentence after a short answer may be the same memory: after a bare yes or a bare "me"
    ("Me. We're moving the orders service to Postgres"), or when it only adds when or where the answer's
    subject does it ("Riverside Elementary. She starts in the fall.")."""
    if answered.reasons == ("follow-up:yes",):
        return bool(_BARE_YES.match(answer))
    if answered.reasons != ("follow-up:wh",):
        return False
    return bool(_SELF_ANSWER.match(answer)) or (
        len(answer.split()) <= 4 and not is_clause(answer) and bool(_ONLY_WHEN_OR_WHERE.match(following)))


def _goes_on(answered: _Draft, detail: _Draft) -> bool:
    """After a bare yes anything goes on; otherwise the sentence must be about the answer's subject."""
    return answered.reasons == ("follow-up:yes",) or _lead_name(answered.content) == _lead_name(detail.content) != ""


def _lead_name(content: str) -> str:
    """The name a memory opens with as its subject ("Lily" in "Lily starts ..."), or ""."""
    m = re.match(r"^([A-Z][\w.-]*(?: [A-Z][\w.-]*)*) (?=[a-z])", content)
    return m.group(1) if m and not m.group(1).endswith("'s") else ""


def _reshaped(info: _Turn, body: str, content: str, rewrite: Rewrite, has_detail: bool) -> tuple[str, bool]:
    """The content in the shape a memory takes, and whether it is about a person."""
    personal = rewrite.first_person or rewrite.plural_first_person or rewrite.second_person or rewrite.third_person
    if not personal and not _has_verb(body) and (has_detail or _ROUTINE.search(body)) and _answers_or_tells(info):
        fragment = _lower_first(_POLAR_LEAD.sub("", body))
        # "Dentist on Thursday at 10", "Double espresso, every morning": something the speaker has
        has = _starts_with_a_noun(info, fragment) and not is_small_talk(fragment.split(",")[0])
        content = f"{info.speaker} has {fragment}" if has else f"{info.speaker}: {fragment}"
        personal = True  # "$500 a month into an S&P 500 index fund" answering "How will you invest it?"
    user = (info.context.turn.role or "") == "user"
    if not personal and has_detail and user and re.match(r"^(?:the|our|this)\s+\w+", body, re.I):
        owner = _owner_said_before(info, body) or info.speaker  # a user's "the review" is theirs
        content = f"{possessive(owner)} {content.split(' ', 1)[1]}"
    name = re.escape(info.speaker)  # "I'm Priya, a product manager" said by Priya
    content = re.sub(rf"^({name})(?: is|'s name is) {name}(?:,\s*|\s+and\s+|$)", r"\1 is ", content).strip()
    return content, personal


def _rule_and_its_value(clause: str) -> list[str]:
    """"Don't book anything over the daily standup, it's 9:30 every morning": a rule, and a fact about
    the thing it names; two memories of two kinds, so the fact is found (and deduplicated) as one."""
    rule = _RULE_WITH_VALUE.match(clause)
    if rule is None or not _RULE_START.match(clause):
        return [clause]
    at = "at " if re.match(r"\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)?\b(?![/.-]\d)", rule["value"], re.I) else ""
    thing = rule["thing"]
    return [rule["rule"], f"{thing[:1].upper()}{thing[1:]} is {at}{rule['value']}"]


def _it_named_before(body: str, before: Sequence[str]) -> str:
    """"Yes, a large coffee, black. I always take it black": the "it" is the coffee the verbless sentence
    just before named, and the memory has to say so to stand alone. Anything else is left as said."""
    its = list(_OBJECT_IT.finditer(body))
    if len(its) != 1 or not before or _has_verb(before[-1]):
        return body
    named = _NAMED_THING.match(before[-1])
    if named is None or len(named["thing"].split()) > 3:
        return body
    noun = named["thing"].split()[-1]
    if noun in NOT_NAMES or noun in _DETERMINERS or is_adverb(noun):
        return body
    return body[:its[0].start()] + noun + body[its[0].end():]


def _bridges(info: _Turn, clause: str, draft: _Draft) -> bool:
    """"I own the Q3 roadmap for Atlas; the review with leadership is July 18": a definite thing no one
    named before, right after another clause of the sentence, belongs to what that clause is about."""
    return bool(re.match(r"^the\s+[a-z]", strip_padding(clause, info.known))) \
        and draft.content.startswith(f"{possessive(info.speaker)} ")


def _told_in_asking(question: str) -> str | None:
    """What a question or request tells about the speaker, in their words: "Ideas for a rainy day with my
    two children, Ella and Sam?" -> "my two children are Ella and Sam"; "Any good climbing gyms near me?"
    -> "I'm looking for good climbing gyms near me"."""
    if kin := _KIN_NAMED.search(question):
        return f"my {kin['kin']} {'are' if ' and ' in kin['names'] else 'is'} {kin['names']}"
    if looking := _LOOKING_FOR.match(question):
        return f"I'm looking for {looking['what']} {looking['where']}"
    return None


def _starts_with_a_noun(info: _Turn, fragment: str) -> bool:
    """Whether a verbless fragment opens with a common noun ("dentist on ...", "lessons with Marco"), not
    a name, an amount, an article or an adverb ("$500 a month into ...", "mostly jazz")."""
    first = fragment.split()[0] if fragment.split() else ""
    return (first.isalpha() and first.islower() and first not in NOT_NAMES and first not in _DETERMINERS
            and not is_adverb(first) and first.capitalize() not in info.seen)


def _owner_said_before(info: _Turn, body: str) -> str | None:
    """Whose "the school newsletter" is when someone's school came up just before ("Oscar's first day of
    school", Tom's "our standup", a known "Tom's standup is at 9:30"): that person; None when no one's was
    named, or more than one person's."""
    nouns = [w for w in body.split()[1:3] if w.isalpha() and w.islower() and len(w) > 3 and not is_past(w)
             and w not in PAST_FORMS and not w.endswith("s")]
    turns = [info.context.turn, *reversed(info.context.window)]
    for noun in nouns:
        owners = {m.group(1) for text in [*(t.text for t in turns), *info.context.memories] for m in re.finditer(
            rf"\b([A-Z][a-z]+)'s\s+(?:[a-z]+\s+){{0,3}}?{noun}\b", text)}
        owners |= {display_name(t.speaker) for t in turns if not _is_assistant(t)
                   and re.search(rf"\b(?:my|our)\s+(?:[a-z]+\s+){{0,3}}?{noun}\b", t.text, re.I)}
        owners -= {info.speaker, *(w.capitalize() for w in NOT_NAMES)}
        if owners:
            return owners.pop() if len(owners) == 1 else None
    return None


def _not_worth_keeping(info: _Turn, body: str, content: str, personal: bool, has_detail: bool) -> str | None:
    """Why a statement is not a memory (a feeling, praise, a generic truth, a vague or half-resolved
    sentence), or None when it is one."""
    words = len(content.split())
    if is_feeling(body) and not has_detail:
        return "feeling"
    if _LISTENER_START.match(body) and not has_detail and info.addressee != "the assistant":
        return "about the listener"  # "You're so brave": praise, not a fact
    if _GERUND_SUBJECT.match(body) and not has_detail:
        return "generic"  # "Taking care of ourselves is vital"
    definite = re.match(r"^(?:the|our|this)\s+\w+", body, re.I)
    prescriptive = _has_verb(body) and _OBLIGATION.search(body)
    values = re.sub(r"\b(?:19|20)\d\d\b", "", body)  # "standup is at 10:00" has a value; "in 2019" is just when
    stated = _has_verb(body) and (_has_detail(info, values) or (definite and has_detail))
    if not (personal or prescriptive or stated or _dated_event(info, body)):
        return "no one in it"  # "Last time was in 2019": a number alone is about no one
    if content in {info.speaker, f"{info.speaker} is"}:
        return "introduction"
    if not has_detail and (words <= 2 or (_VAGUE.search(body) and words <= 8)):
        return "vague"
    if _PRONOUN_START.match(content) and not has_detail:
        return "unresolved subject"
    if re.match(r"^(?:you|your|you're|you've)\b", content, re.I):
        return "unresolved listener"  # no one was addressed, so "you" cannot become a name
    if re.search(r"\b(will|would|can|could|do|does|did|am|is|are|have|has)$", content) and not has_detail:
        return "elliptical"  # "I definitely will"
    return None


def _kind(text: str, resolved: Resolution, now: datetime) -> MemoryKind:
    """`classify_kind`, with what it cannot see: a fact dated to a day (or one that is over) is an episode,
    a diet or a standing want is a preference, "every PR needs ..." is a rule."""
    kind = classify_kind(text)
    if kind == "rule" and _PREFERENCE_VERB.search(text) and not _PRESCRIPTIVE.search(text):
        return "preference"  # "Ottilie always prefers places near mountains": a habit of liking, not an order
    if kind == "fact" and (_STANDING_RULE.search(text) or re.match(r"^(?:no|never)\s", text, re.I)):
        return "rule"
    if kind == "fact" and re.search(r":\s*\w.*,\s*then\b", text):
        return "procedure"  # "whenever it hangs: vpnctl reset, then sign in again"
    if kind == "fact" and _PREFERENCE_WORDS.search(text):
        return "preference"
    if kind == "fact" and resolved.start is not None and resolved.end is not None and (
            resolved.end - resolved.start <= timedelta(days=3) or resolved.end <= now):
        return "episode"
    return kind


def _one_change(drafts: list[_Draft], info: _Turn) -> list[_Draft]:
    """"Not anymore, I've switched to oat milk flat whites. Black coffee upsets my stomach now.": what
    follows "not anymore" is one change, the new habit and why, so it is one memory, not two halves."""
    kept = [d for d in drafts if d.store]
    if len(kept) < 2:
        return drafts
    said = " ".join(t.text for t in (info.context.turn, *info.context.window))
    change = kept[0]
    for draft in kept[1:]:
        first = draft.content.split()[0]
        lower = first.lower()
        if first not in info.seen and (lower in NOT_NAMES or re.search(rf"(?<!\w){re.escape(lower)}(?!\w)", said)):
            draft = replace(draft, content=_lower_first(draft.content))  # "Black coffee ...": "black" was said
        change = _joined(change, draft)
    return [d for d in drafts if not d.store] + [change]


def _joined(first: _Draft, second: _Draft) -> _Draft:
    return _Draft(f"{first.content.rstrip('.!')}; {second.content}", f"{first.source} {second.source}",
                  f"{first.kind_text}; {second.kind_text}", min(first.confidence, second.confidence),
                  first.reasons + second.reasons, tuple(dict.fromkeys(first.turn_ids + second.turn_ids)))


def display_name(speaker: str) -> str:
    """The speaker as a memory names them: "user" -> "User"."""
    name = " ".join(speaker.split()) or "User"
    return name[:1].upper() + name[1:] if name.islower() else name


def _is_assistant(turn: TurnView) -> bool:
    if turn.role:
        return turn.role.lower() == "assistant"
    return turn.speaker.strip().lower() in _ASSISTANT_NAMES


def _addressee(context: GenerationContext) -> str | None:
    """Who "you" is: the previous speaker, else the latest other speaker in the window."""
    other = context.previous or next((t for t in reversed(context.window) if t.speaker != context.turn.speaker), None)
    if other is None:
        return None
    return "the assistant" if _is_assistant(other) else display_name(other.speaker)


def _speakers(context: GenerationContext) -> list[str]:
    return [display_name(t.speaker) for t in context.window if not _is_assistant(t)]


def _recent_mentions(context: GenerationContext, speaker: str) -> tuple[Mention, ...]:
    """People named in the last four turns, newest first: who "she" may be."""
    found: list[Mention] = []
    for turn in list(reversed(context.window))[:4]:
        found += find_mentions(turn.text, display_name(turn.speaker),
                               speaker if display_name(turn.speaker) != speaker else None)
    return tuple(found)


def _with_subject(body: str) -> tuple[str, bool]:
    """Chat drops the subject ("Moved to Lisbon in March"); put the speaker's "I" back."""
    first = body.split()[0].lower() if body.split() else ""
    low = body[:1].lower() + body[1:]
    if first in {"gonna", "going"} and re.match(r"^(gonna|going to)\b", low):
        return "I'm going to " + low.split(" ", 1)[1] if first == "gonna" and " " in low else "I'm " + low, True
    if first == "been":
        return "I've " + low, True
    if first in {"just", "finally", "recently", "also", "already", "currently", "now", "really", "still"}:
        first = body.split()[1].lower() if len(body.split()) > 1 else ""
    if first in _STATE_WORDS:
        return body, False
    if (first in PAST_FORMS and first not in {"been", "done"}) or (first.endswith("ed") and len(first) > 4):
        return "I " + low, True
    gerund = _GERUND_START.match(low)
    if gerund and not gerund["adverb"] and _names_the_subject(low.split()):
        return body, False  # "Billing moved to the new cluster": the -ing word is what the sentence is about
    named = re.search(r"\d|\s[A-Z]", body)  # "Creating gaming content for YouTube": something definite is done
    if gerund and not _FINITE.search(body) and (first in _PLAN_GERUNDS or gerund["adverb"] or named):
        return "I'm " + low, True  # "Currently reading Project Hail Mary": the adverb says it is going on
    if _PREFERENCE_START.match(body):
        return "I " + low, True
    return body, False


def _names_the_subject(words: Sequence[str]) -> bool:
    """Whether an -ing word opening a sentence is its subject: a verb follows it ("Billing moved",
    "billing still runs"), where a plan would go on with its object ("Moving boxes all day")."""
    after = words[1] if len(words) > 1 else ""
    then = words[2] if len(words) > 2 else ""
    return is_past(after) or (is_adverb(after) and (is_past(then) or then.endswith("s")))


def _person_confidence(rewrite: Rewrite, confidence: float) -> tuple[float, tuple[str, ...]]:
    """Plain first-person statements are the surest; each heuristic resolution costs a little."""
    reasons = []
    for flag, cost, why in (("first_person", 0.0, "first person"), ("plural_first_person", 0.1, "we as speaker"),
                            ("second_person", 0.1, "you as addressee"), ("third_person", 0.15, "he/she resolved"),
                            ("unresolved", 0.25, "pronoun left")):
        if getattr(rewrite, flag):
            confidence -= cost
            reasons.append(why)
    if not reasons:
        confidence -= 0.05  # about someone named, no one speaking of themselves
    return confidence, tuple(reasons)


def _render_segments(follow: FollowUp, answerer: str, asker: str, antecedents: tuple[Mention, ...]) -> str:
    """Each part in its own speaker's perspective: the asker's "you" and the answerer's "I" are one person."""
    parts = []
    for segment in follow.segments:
        speaker, listener = (answerer, asker) if segment.by_answerer else (asker, answerer)
        parts.append(rewrite_persons(segment.text, speaker, listener, antecedents).text)
    return "".join(parts)


def _merge_clause(statement: str, answer: str) -> str | None:
    """"Alex is going to Japan" + "Alex is going next April" -> "Alex is going to Japan next April"."""
    said, heard = statement.split(), answer.rstrip(".!").split()
    common = 0
    while common < min(len(said), len(heard)) and said[common].lower() == heard[common].lower():
        common += 1
    if common < 2 or common == len(heard):
        return None
    return " ".join(said + heard[common:])


def _has_detail(info: _Turn, rewritten: str, numbers: bool = True) -> bool:
    """Whether a sentence names something beyond the two people talking: a name, or a number.

    A capitalised first word counts only when it is written capitalised mid-sentence nearby too:
    "Maya" is a name, "Family" at the start of "Family is everything" is not."""
    if numbers and re.search(r"\d", rewritten):
        return True
    own = {info.speaker, info.addressee, "the assistant"}
    lead = rewritten.split()[0].strip(",.!:;'").removesuffix("'s") if rewritten.split() else ""
    for name in find_entities(rewritten, info.known):
        if name in own or name.lower() == "the assistant":
            continue
        first = name.split()[0]
        if first == lead and rewritten.startswith(lead) and first.removesuffix("'s") not in info.seen \
                and not _POSSESSOR_SUBJECT.match(rewritten):
            continue
        return True
    return numbers and bool(resolve_dates(rewritten, info.context.now).times)  # "My exam is next Tuesday": a date


def _answers_or_tells(info: _Turn) -> bool:
    """A user telling the assistant, or anyone answering a question: a verbless reply still says something."""
    previous = info.context.previous
    return (info.context.turn.role or "").lower() == "user" or bool(previous and previous.text.rstrip().endswith("?"))


def _names_someone(info: _Turn, content: str, asker: str) -> bool:
    people = {info.speaker, asker, *info.known}
    return any(re.search(rf"\b{re.escape(p)}\b", content) for p in people if p and p != "the assistant")


def _has_verb(text: str) -> bool:
    """A statement has a verb; "A suspenseful thriller set in a small Midwestern town" is a caption."""
    words = re.findall(r"[a-z']+", text.lower())
    return bool(_FINITE.search(text) or re.search(r"\w'(?:s|re|m|ll|ve)\b", text)) \
        or any(w in PAST_FORMS or (w.endswith("ed") and len(w) > 4) for w in words) \
        or any(w.endswith("s") and i and words[i - 1] not in _DETERMINERS | {"no", "yes", "and", "or"}
               for i, w in enumerate(words[:4]))


def _dated_event(info: _Turn, body: str) -> bool:
    """"The design review moved to Friday at 11", "Billing moved to the new cluster in 2022": a definite
    thing with a date of its own is worth keeping though no one is named; "The weather is nice today" is
    not (today is not a date anyone will ask about)."""
    gerund = re.match(r"^(?!\w*thing\b)\w+ing\b", body, re.I) and _names_the_subject(body.lower().split())
    if not (re.match(r"^the\s+\w+", body, re.I) or gerund) or is_small_talk(body):
        return False
    times = resolve_dates(body, info.context.now).times
    return any(t.phrase.lower() not in {"today", "tonight"} for t in times)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _finish(text: str) -> str:
    """Tidy spacing and end punctuation; start with a capital unless the first word is "iPhone"-like."""
    text = re.sub(r"\s+([,;:])", r"\1", " ".join(text.split())).strip().rstrip(".!;:,-").strip()
    first = text.split()[0] if text else ""
    if first[:1].islower() and first[1:] == first[1:].lower():
        text = text[:1].upper() + text[1:]
    return text
