"""Short answers made whole with the question they answer.

"When are you going to Japan?" / "Next April" is one memory: "Alex is going to Japan next April".
The question is turned into a statement and the answer fills the slot its wh-word left; a yes/no
answer sets the statement's polarity ("Are you still vegetarian?" / "No" -> "... no longer
vegetarian"). Words keep the perspective of whoever said them (the asker's "you" is the answerer,
the answerer's "I" is the answerer too), so the result is a list of segments the caller resolves
separately. Small talk ("How are you?") and offers ("Would you like ...?") are not merged: their
answers carry nothing durable. Where a question about going leaves the place to the conversation
before, `generate/destination.py` puts it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mnemoflow.memory.english.lexicon import (
    ALLERGEN_ALIASES,
    ALLERGENS,
    NUMBERS_TO_TWELVE,
)
from mnemoflow.memory.english.sentences import split_clauses
from mnemoflow.memory.english.verbs import (
    PAST_FORMS,
    SAME_IN_PAST,
    is_past,
    past,
    third_person,
)
from mnemoflow.memory.generate.judge import _has_verb
from mnemoflow.memory.relate.claim_words import STOPWORDS
from mnemoflow.memory.generate.questions import (
    _BE,
    _DO,
    _ENDING_PREPS,
    Question,
    _embedded_question,
    _join,
    parse_question,
    statement,
)

_ABOUT = re.compile(r"^(?:and |so |ok,? )?(?:what|how) about ([^?]+?)\??$", re.I)
_EVENT_VERBS = frozenset({"", "happen", "start", "begin", "end", "be"})

_HEDGE = re.compile(r"^(?:(?:mostly|mainly|probably|usually|just|only|partly|still|actually)\s+)+", re.I)
_PLACE_PREPS = re.compile(r"^(in|at|to|from|near|on|by|outside|inside|around|back|into|over|up|down)\b|"
                          r"^(home|here|there|abroad|downtown|overseas|upstairs|nowhere|somewhere)$", re.I)
_MOTION = re.compile(r"\b(go|goes|going|went|gone|travel\w*|fly|flying|flew|move|moving|moved|head\w*|drive|"
                     r"driving|drove|come|coming|came|relocat\w*|return\w*|commut\w*|walk\w*)\b", re.I)
_YES = re.compile(r"^(yes|yeah|yep|yup|yea|ya|sure|of course|definitely|absolutely|correct|right|indeed|totally|"
                  r"exactly|for sure|mhm|uh-huh|you bet|certainly|that's right|i do|i am|i have|i did|i will|"
                  r"i can|we do|we are|we have|we did|still am|still do)\b[\s,.!:;-]*", re.I)
_NO = re.compile(r"^(not anymore|not any more|no longer|not really|not yet|not at all|nope|nah|never|none|no|"
                 r"i don't|i do not|i'm not|i am not|i haven't|i have not|i didn't|i did not|i won't|i can't|"
                 r"we don't|we're not|we didn't)\b[\s,.!:;-]*", re.I)
_NO_LONGER = re.compile(r"^(not anymore|not any more|no longer|not these days)\b[\s,.!:;-]*", re.I)
_UNSURE = re.compile(r"^(not sure|no idea|dunno|i don't know|idk|maybe|who knows|hard to say|we'll see|"
                     r"haven't decided|not decided)\b", re.I)
_CLAUSE = re.compile(r"^(i|i'm|i've|i'll|i'd|we|we're|we've|we'll|we'd|he|she|they|it|it's|there|that's|this is|"
                     r"he's|she's|they're|you)\b|^(my|our)\s+\w+(\s+\w+)?\s+(is|was|are|were|has|have|had|will|"
                     r"(?!mrs\b|ms\b)\w+s|\w+ed)\b|^\S+.*\b(is|are|was|were|has|have|had|will|would|can|could|does|did|do)(n't)?\b|"
                     r"^\w+'s\s+(a|an|the|my|our|your|his|her|so|really|just|not|been|got|mostly|always|never|"
                     r"definitely|probably|\w+ing)\b|^(?:the|my|our)\s.*\w's\s+(?:in|on|at|off|gone|dead|finally|officially|"
                     r"already|\w+ed)\b|^(?:the|his|her|their)\s+(?:[\w-]+\s+){0,3}?(?:sits|lives|runs|stays|works|meets)\b",
                     re.I)
_FILLER_FRAGMENT = re.compile(r"^(totally|definitely|absolutely|of course|for sure|haha+|lol|thanks?|thank you|"
                              r"actually|yeah|yep|honestly|really|indeed|exactly|sure|obviously|100%|i guess|"
                              r"kind of|sort of|kinda|sorta)\W*$", re.I)
_ATTRIBUTIVE = frozenset({"a", "an", "the", "my", "our", "your", "his", "her", "their", "very", "so", "pretty"})
_SUBORDINATE = re.compile(r"^(since|because|when|after|before|until|till|as soon as|once|while|'cause|cause)\b", re.I)
_NUMBER = re.compile(r"^(about |around |roughly |almost |over |nearly |just |only )?(\d[\d,.]*|a few|a couple|"
                     + "|".join(NUMBERS_TO_TWELVE) + r"|a dozen|several)\b", re.I)
_LOWER_FIRST = re.compile(
    r"^(a|an|the|in|on|at|to|for|with|from|by|about|around|probably|maybe|just|only|mostly|because|since|until|"
    r"next|last|this|tomorrow|today|tonight|yesterday|early|late|mid|every|mornings|evenings|weekends|nights|"
    r"afternoons|" + "|".join(NUMBERS_TO_TWELVE) + r"|several|a few|twice|once|some|my|our|his|her|their|"
    r"hopefully|definitely|usually|always|never|almost|over|nearly|roughly)\b")
_PREP_START = re.compile(r"^(in|on|at|to|with|for|from|by|next|last|this|tomorrow|today|tonight|yesterday|since|"
                         r"until|around|about|before|after|during|near)\b", re.I)
_NUMBER_WORD = r"\d+|" + "|".join(NUMBERS_TO_TWELVE)
_GERUND = re.compile(r"^[A-Za-z]+ing\b")


@dataclass(frozen=True)
class Segment:
    text: str
    by_answerer: bool  # whose "I" and "you" the words use: the answerer's or the asker's


@dataclass(frozen=True)
class FollowUp:
    """The statement a question and its short answer make together."""

    segments: tuple[Segment, ...]
    # "wh", "how-to", "yes", "no", "choice"; "clause": merge with the answer's own clause; "topic": complete the
    # statement before an elliptic question; "about": the answer alone, with "them" put back as the topic
    mode: str
    leftover: str | None = None  # a full clause after "yes," / "no,": a statement of its own


def _fragment(answer: str) -> str:
    """The answer as words to insert mid-sentence: "Next April." -> "next April"."""
    text = answer.strip().rstrip(".!?").strip()
    first = text.split()[0] if text else ""
    if first[:1].isupper() and first[1:] == first[1:].lower() and (
            _LOWER_FIRST.match(text.lower()) or first.lower() in STOPWORDS):  # "Up to 35 km": no name
        text = text[:1].lower() + text[1:]
    return text


def is_clause(text: str) -> bool:
    """A full statement of its own ("I'm going next April", "a buddy of mine adopted last year"), not a
    fragment ("next April", "since I was 17": a subordinate clause only completes the question)."""
    text = text.strip()
    if _SUBORDINATE.match(text):
        return False
    if _CLAUSE.match(text):
        return True
    words = re.findall(r"[A-Za-z']+", text.split(",")[0].lower())  # "a beagle, very food motivated": an aside
    return any(((w in PAST_FORMS or (w.endswith("ed") and len(w) > 4)) and words[i - 1] not in _ATTRIBUTIVE)
               or (w in SAME_IN_PAST and words[i + 1:i + 2] in (["me"], ["us"], ["him"], ["them"]))  # "put me on"
               for i, w in enumerate(words) if i >= 2)


_SELF = re.compile(r"^(?:me|myself|i do|i have|i will|i am|i did|i can|i've got|i'll)\b(?!\s+\w)[\s,.!]*", re.I)


def merge(question: str, answer: str) -> FollowUp | None:
    """What `answer` (the first sentence of a turn) says, read against the question it answers."""
    answer = answer.strip()
    about = _ABOUT.match(question.strip())
    if about and answer and not is_clause(answer):  # "What about olives?" / "Love them."
        topic = about.group(1).strip()
        said = re.sub(r"\b(them|it|those|these|that one)\b", topic, answer, count=1, flags=re.I)
        return FollowUp((), "about", said) if said != answer else None
    if done := _done(question, answer):  # "Jon can you book the table at the Crown?" / "done, 7:30"
        return FollowUp((), "about", done)
    q = _embedded_question(question) or parse_question(question)
    if q is None or not answer or _UNSURE.match(answer):
        return None
    if q.wh in {"when", "what time"} and q.subject in {"that", "this"} and q.rest.lower() in _EVENT_VERBS:
        return _elliptic(q, answer)  # "When did that happen?": the event is the statement before
    if q.wh is None:
        return _yes_no(q, answer)
    if not q.aux and not q.subject and not q.rest:
        return _elliptic(q, answer)
    if q.wh == "who" and not q.subject and (me := _SELF.match(answer)):  # "who's got the keys?" / "I do, ..."
        found = _wh(q, "me")
        return replace(found, leftover=answer[me.end():].strip(" ,.!") or None) if found else None
    head, comma, tail = answer.partition(",")
    if comma and not is_clause(head) and is_clause(tail.strip()):
        found = _wh(q, _fragment(head))  # "Who's bringing the tent?" / "me, it's the big green one"; "What do you
        return replace(found, leftover=tail.strip()) if found else None  # drive?" / "A Kia now, the Tesla was dear"
    if is_clause(answer):
        return FollowUp((Segment(statement(q), False),), "clause", answer)
    if is_polar(answer):
        return None
    return _wh(q, _fragment(answer))


_ASKED_TO = re.compile(r"^(?:[A-Z][a-z]+,?\s+)?(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?P<verb>[a-z]+)\s+"
                       r"(?P<rest>[^?]+?)\??$")
_DONE = re.compile(r"^(?:yep,?\s+|yes,?\s+|all\s+)?(?:done|sorted|did it|booked|on it,? done)\b[\s,.!]*", re.I)


def _done(question: str, answer: str) -> str | None:
    """A request answered "done": what was asked is what the answerer did, with what the answer adds
    ("book the table at the Crown" / "done, 7:30" -> "I booked the table at the Crown, 7:30")."""
    asked, done = _ASKED_TO.match(question.strip()), _DONE.match(answer.strip())
    if asked is None or done is None or asked["verb"] in {"be", "have", "do", "tell", "help", "remind"}:
        return None
    extra = answer.strip()[done.end():].strip(" .!")
    return f"I {past(asked['verb'])} {asked['rest']}" + (f", {extra}" if extra else "")


def reports_done(answer: str) -> bool:
    """Whether an answer says a request was done ("done, 7:30", "sorted!")."""
    return bool(_DONE.match(answer.strip()))


def is_polar(answer: str) -> bool:
    """Whether an answer starts with yes or no ("Yep, ...", "Not anymore")."""
    return bool(_YES.match(answer) or _NO.match(answer))


def _yes_no(q: Question, answer: str) -> FollowUp | None:
    if ", or " in q.rest:
        return None  # "Do you have any experience, or know anyone who...?": two questions in one
    alternatives = re.search(r"\b((?:the |a |an )?[\w-]+) or ((?:the |a |an )?[\w-]+)\b", q.rest)
    if alternatives:
        return _choice(q, alternatives, answer) or _phrase_choice(q, answer)
    if (each := _each_item(q, answer)) is not None:
        return each
    yes, no = _YES.match(answer), _NO.match(answer)
    if not (yes or no):
        return _open_yes_no(q, answer)
    polar = no or yes
    assert polar is not None
    rest = answer[polar.end():]
    anymore = _NO_LONGER.match(rest) if no else None  # "No, not anymore"
    no_longer = bool(_NO_LONGER.match(answer) or anymore)
    rest = (rest[anymore.end():] if anymore else rest).strip().rstrip(".!?").strip()
    if no and polar.group().strip(" ,.!").lower() == "never":
        words = re.sub(r"\bever\s+", "", q.rest).split()
        if q.aux in _DO or not q.aux:
            if words and q.aux in {"did", "does"}:
                words[0] = past(words[0].lower()) if q.aux == "did" else third_person(words[0].lower())
            return FollowUp((Segment(_join(q.subject, "never", " ".join(words)), False),), "no")
        return FollowUp((Segment(_join(q.subject, q.aux, "never", " ".join(words)), False),), "no")
    if no and not q.aux and q.rest and is_past(q.rest.split()[0]):
        return None  # "You moved, right?" / "No": the negated statement needs the verb's base form
    if yes and rest and not no_longer and re.search(r"\b(?:any|some)(?:thing|where|one)\b", q.rest, re.I) and \
            (named := _open_yes_no(q, rest)) is not None:
        return named  # "Have you booked anywhere for dinner?" / "yep, Dishoom in Covent Garden"
    base = statement(q, negate=bool(no), no_longer=no_longer)
    leftover = rest if rest and is_clause(rest) else None
    if yes and rest and not leftover and re.search(r"\bany\b", base) and _NUMBER.match(rest):
        return FollowUp((Segment(re.sub(r"\bany\b", _fragment(rest), base, count=1), False),), "yes")
    if yes:
        base = re.sub(r"\bany\s+", "", base, count=1)
    segments = [Segment(base, False)]
    if rest and not leftover and not _YES.fullmatch(rest) and not _FILLER_FRAGMENT.match(rest):
        fragment = _fragment(rest)
        segments.append(Segment((" " if _PREP_START.match(fragment) else ", ") + fragment, True))
    return FollowUp(tuple(segments), "no" if no else "yes", leftover)


_EACH_ANSWERED = re.compile(r"^(?P<a>[\w' -]+?)\s+(?P<pa>yes|no)\s*[,;]\s*(?P<b>[\w' -]+?)\s+(?P<pb>yes|no)$", re.I)
_LISTED = re.compile(r"\b((?:a |an |the |some )?[\w-]+) and ((?:a |an |the |some )?[\w-]+)\b")


def _each_item(q: Question, answer: str) -> FollowUp | None:
    """"Do you want a starter and a dessert as well?" / "dessert yes, starter no": each thing the question
    listed, answered on its own, is a statement of its own polarity."""
    said = _EACH_ANSWERED.match(answer.strip().rstrip(".!"))
    listed = _LISTED.search(q.rest)
    if said is None or listed is None:
        return None
    statements = []
    for item, polarity in ((said["a"], said["pa"]), (said["b"], said["pb"])):
        option = next((o for o in listed.groups() if re.sub(r"^(?:a|an|the|some) ", "", o.lower()) == item.lower()), None)
        if option is None:
            return None
        rest = re.sub(r"\s+(?:as well|too)$", "", q.rest[:listed.start()] + option + q.rest[listed.end():])
        statements.append(statement(replace(q, rest=rest), negate=polarity.lower() == "no"))
    return FollowUp((Segment("; ".join(statements), False),), "yes")


def _open_yes_no(q: Question, answer: str) -> FollowUp | None:
    """"Are you allergic to anything?" / "Just bee stings": the answer names what "anything" (or "anywhere")
    stood for."""
    open_word = re.search(r"\b(anything|something|anyone|someone|anywhere|somewhere|any\s+\w+)\b", q.rest, re.I)
    if not open_word or is_clause(answer):
        return None
    fragment = _fragment(answer)
    if open_word.group(1).lower().startswith("any "):  # "Any plans tonight?" / "Dinner at Nopa"
        base = statement(replace(q, rest=re.sub(r"\bany\s+", "", q.rest, count=1, flags=re.I)))
        return FollowUp((Segment(base, False), Segment(": " + fragment, True)), "yes")
    marker = "\0"  # where "anything" was, so the answer goes in its place once the words are reordered
    base = statement(replace(q, rest=q.rest[:open_word.start()] + marker + q.rest[open_word.end():]))
    before, _, after = base.partition(marker)
    segments = [Segment(before, False), Segment(fragment, True)] + ([Segment(after, False)] if after else [])
    return FollowUp(tuple(segments), "yes")


# "with screen games or paper ones": the first alternative starts after the preposition or article before it
_CLAUSE_AFTER_OR = re.compile(r"(?:are|is|am|was|were|do|does|did|will|would|can|could|should|have|has)\b", re.I)
_PHRASE_START = re.compile(r".*\b(?:with|for|to|in|on|at|by|of|from|the|a|an|some)\s+", re.I)


def _chosen_phrase(rest: str, first: str) -> str | None:
    """"with screen games or paper ones" / "paper", "the red one or the blue one" / "the red one": the two
    alternatives are the phrases around "or", the first one from the preposition or article before it; the
    answer's words pick the one that alone has them. None when no such phrase is there to pick."""
    before, _, right = rest.partition(" or ")
    lead = _PHRASE_START.match(before)
    if lead is None or not right or _CLAUSE_AFTER_OR.match(right):
        return None  # "a day trip or are you staying over": a question of its own after "or"
    left = before[lead.end():]
    if len(left.split()) < 2 and len(right.split()) < 2:
        return None  # one word each: the single-word choice below says the same
    words = {w for w in re.findall(r"[\w-]+", first) if w not in {"the", "a", "an"}}
    sides = [side for side in (left, right) if words and words <= {w.lower() for w in re.findall(r"[\w-]+", side)}]
    return before[:lead.end()] + sides[0] if len(sides) == 1 else None


def _choice(q: Question, alternatives: re.Match[str], answer: str) -> FollowUp | None:
    said = answer.strip().rstrip(".!?")
    first = said.split(",")[0].strip().lower()
    tail = said[len(said.split(",")[0]):].strip()
    if (phrase := _chosen_phrase(q.rest, first)) is not None:
        base = statement(Question(None, None, q.aux, q.subject, phrase))
        return FollowUp((Segment(base, False),) + ((Segment(tail, True),) if tail else ()), "choice")
    for option in alternatives.groups():
        core = re.sub(r"^(the|a|an) ", "", option.lower())
        if first in {core, option.lower()} or first.endswith(" " + core):
            chosen_rest = q.rest[:alternatives.start()] + option + q.rest[alternatives.end():]
            base = statement(Question(None, None, q.aux, q.subject, chosen_rest))
            segments = [Segment(base, False)] + ([Segment(tail, True)] if tail else [])
            return FollowUp(tuple(segments), "choice")
    return None


_ASKERS_WORDS = {"my": "your", "mine": "yours", "i": "you", "me": "you", "i'm": "you're", "our": "your", "we": "you"}


def _phrase_choice(q: Question, answer: str) -> FollowUp | None:
    """"Are you bringing your own rod or hiring one?" / "my own, 9ft 7-weight": the answer's first words, in
    the asker's person, are words of one alternative, which becomes the statement."""
    said = answer.strip().rstrip(".!?")
    head = said.split(",")[0].strip()
    words = [_ASKERS_WORDS.get(w, w) for w in head.lower().split()]
    left, _, right = q.rest.partition(" or ")
    for side in (left, right):
        side_words = side.lower().split()
        if not words or not any(side_words[i:i + len(words)] == words for i in range(len(side_words))):
            continue
        asked = parse_question(side.strip() + "?") if side is right else None  # "... or are you staying over?"
        chosen = asked if asked and asked.aux and asked.wh is None else Question(None, None, q.aux, q.subject,
                                                                                   side.strip())
        tail = said[len(said.split(",")[0]):].strip()
        return FollowUp((Segment(statement(chosen), False),) + ((Segment(tail, True),) if tail else ()), "choice")
    return None


def _elliptic(q: Question, answer: str) -> FollowUp | None:
    """"When?" / "Next April": the answer completes a statement said before the question."""
    if is_clause(answer):
        return None
    text = _fragment(answer)
    wh = q.wh or ""
    if wh in {"when", "since when", "what time"}:
        slot = f"at {text}" if wh == "what time" and re.match(r"^(\d|noon|midnight)", text) else text
    elif wh in {"where", "where to"}:
        slot = text if _PLACE_PREPS.match(text) else ("to " if wh == "where to" else "in ") + text
    elif wh == "how long":
        slot = text if re.match(r"^(for|since|until|till)\b", text) else "for " + text
    elif wh in {"with whom", "with who", "who with"}:
        slot = text if text.lower().startswith("with ") else "with " + text
    elif q.noun and re.fullmatch(r"nights|days|weeks|months|hours|years", q.noun, re.I) and _NUMBER.match(text):
        slot = text if text.lower().startswith("for ") else "for " + text  # "How many nights?" / "Two nights"
    elif q.noun:
        slot = f"({q.noun}: {text})"
    else:
        return None
    return FollowUp((Segment(" " + slot, True),), "topic")


def _wh(q: Question, text: str) -> FollowUp | None:
    wh, rest = q.wh or "", q.rest
    ask = lambda words: Segment(words, False)  # noqa: E731 - the asker's words
    said = lambda words: Segment(words, True)  # noqa: E731 - the answerer's words
    if not q.subject:  # "Who is coming?" / "Maya and Tom" -> "Maya and Tom are coming"
        aux = q.aux or ""
        if " and " in text and aux in {"is", "was"}:
            aux = "are" if aux == "is" else "were"
        noun = f" {q.noun}" if q.noun and q.noun.lower() not in text.lower() else ""
        counted = re.match(rf"^(?P<n>\d+|{_NUMBER_WORD})\s*[,;]\s+(?P<aside>.+)$", text, re.I) if wh == "how many" else None
        if counted:  # "How many are coming?" / "14, basically the whole class": the count, then what it adds
            return FollowUp((said(counted["n"] + noun + " "), ask(_join(aux, rest)), said(", " + counted["aside"])), "wh")
        return FollowUp((said(text + noun + " "), ask(_join(aux, rest))), "wh")
    if q.aux in _BE and not rest and wh in {"who", "whom", "what", "which", "how much", "how long", "how old",
                                              "what kind of", "what sort of", "what type of", "how far"}:
        if wh == "how old" and re.fullmatch(_NUMBER_WORD, text, re.I):
            text += " years old"
        elif wh == "how old" and re.search(r"\b(years?|months?|weeks?|days?)$", text):
            text += " old"
        return FollowUp((ask(_join(q.subject, q.aux)), said(" " + text)), "wh")
    base = statement(q)
    if wh in {"when", "what time", "since when"}:
        if wh == "what time" and re.match(r"^(\d|noon|midnight)", text):
            text = "at " + text
        if wh == "since when" and not text.startswith("since"):
            text = "since " + text
    elif wh in {"where", "where to"}:
        if not (rest.lower().endswith(_ENDING_PREPS) or _PLACE_PREPS.match(_HEDGE.sub("", text))):
            text = ("to " if _MOTION.search(rest) or wh == "where to" else "in ") + text
    elif wh in {"who", "whom"}:
        ending = rest.split()[-1].lower() if rest else ""
        if ending in _ENDING_PREPS and text.lower().startswith(ending + " "):
            text = text[len(ending) + 1:]
    elif wh == "how long":
        # "about two years" -> "for about two years"; not after "takes"/"lasts", which take the span bare
        if not re.match(r"^(for|since|until|till)\b", text) and not re.search(r"\b(take|takes|took|last|lasts|lasted|for)$",
                                                                             base):
            text = "for " + text
    elif wh in {"how many", "how much"}:
        if q.noun and _NUMBER.match(text) and q.noun.lower() not in text.lower():
            head, _, tail = text.partition(",")
            text = f"{head} {q.noun}" + (f",{tail}" if tail else "")
    elif wh in {"what", "which", "what kind of", "what sort of", "what type of"}:
        doing = re.search(r"\b(doing|up to)\b", base)
        if doing and _GERUND.match(text):  # "what are you doing" / "hiking"
            before, after = base[:doing.start()], base[doing.end():]
            segments = [ask(before.strip()), said(" " + text[:1].lower() + text[1:])]
            return FollowUp(tuple(segments + ([ask(" " + after.strip())] if after.strip() else [])), "wh")
        if q.aux == "do" and rest.lower().split()[:1] == ["do"]:
            return FollowUp((ask(_join(q.subject, "work as")), said(" " + text)), "wh")
        if q.noun and len(text.split()) <= 2 and q.noun.lower() not in text.lower():
            text = f"{text} {q.noun}"
    elif wh == "how" and q.aux in _DO and re.match(r"^(make|cook|bake|prepare|brew|mix)\b", rest, re.I):
        thing = re.sub(r"^(make|cook|bake|prepare|brew|mix)\s+(?:the |a |an |your )?", "", rest, flags=re.I)
        return FollowUp((ask(f"your {thing}:"), said(" " + text)), "how-to")  # "How do you make the pierogi dough?"
    elif wh == "how":
        if not re.match(r"^(by|with|through|via|on foot|using)\b", text):
            return None
    elif wh == "why":
        if not re.match(r"^(because|for|to|since|as|so)\b", text):
            text = "because " + text
    elif wh not in {"how often", "how far", "how old"}:  # "How old is he turning?" / "seven on the 14th"
        return None
    return FollowUp((ask(base), said(" " + text)), "wh")


# a question after what someone can't eat: "Any allergies or dietary needs?", "any foods you avoid?"
_ASKS_ALLERGIES = re.compile(r"\b(?:allerg\w*|dietary|diets?|intoleran\w+|foods? (?:you|they|he|she) (?:avoid|can't)|"
                             r"can't eat)\b", re.I)
_ALLERGEN_WORDS = sorted({*ALLERGENS, *(f"{a}s" for a in ALLERGENS), *ALLERGEN_ALIASES, "nuts", "nut",
                          *(f for foods in ALLERGENS.values() for f in foods),
                          *(f"{f}s" for foods in ALLERGENS.values() for f in foods)}, key=len, reverse=True)
_ALLERGEN = re.compile(rf"\b(?P<what>(?:{'|'.join(map(re.escape, _ALLERGEN_WORDS))})"
                       rf"(?:(?:,| and| &) (?:{'|'.join(map(re.escape, _ALLERGEN_WORDS))}))*)\b", re.I)
_WHOSE = re.compile(r"\b(?P<who>(?:my|our) (?:[a-z]+ )?(?:son|daughter|kid|husband|wife|partner|mum|mom|dad|brother|"
                    r"sister|friend|boyfriend|girlfriend)|(?!(?:Yes|Yeah|Yep|Just|Only|Like|Oh|No|Nope)\b)[A-Z][a-z]+)\b")


def first_said(text: str) -> str:
    """A turn up to its first full stop, the dashes in it kept: "just Theo — peanuts." of "just Theo — peanuts.
    properly serious"."""
    return re.split(r"(?<=[.!?])\s", text.strip())[0]


def allergy_answer(question: str, answer: str) -> str | None:
    """"Any allergies or dietary needs?" / "just Theo — peanuts": an answer with no verb of its own that
    names an allergen says who is allergic to it ("Theo is allergic to peanuts"; the speaker when it names
    no one: "yeah shellfish" -> "I'm allergic to shellfish"). None for any other answer."""
    if not _ASKS_ALLERGIES.search(question) or not (food := _ALLERGEN.search(answer)) or \
            _has_verb(answer[:food.start()] + answer[food.end():]):  # "peanuts" is no verb
        return None
    who = _WHOSE.search(answer)
    return f"{who['who']} is allergic to {food['what']}" if who else f"I'm allergic to {food['what']}"


def asked_of(answerer: str, sentence: str) -> str:
    """"I'll do the food, Ben you do drinks too?": the question is the last clause that asks one, put to the
    answerer by name; a sentence that is one question ("what's his name, so I can ...?") stays whole."""
    for clause in reversed(split_clauses(sentence, is_clause)[1:]):
        asked = re.sub(rf"^{re.escape(answerer)},?\s+(?=you\b)", "", clause)
        if asked.endswith("?") and parse_question(asked):
            return asked
    return sentence


def refined(topic: str, slot: str) -> str | None:
    """"Which ankle?" / "Left": the word or two that answer which one go before the noun the statement asked
    about named ("twisted my ankle" -> "twisted my left ankle"); None when the noun is not in it."""
    m = re.fullmatch(r"\s*\((?P<noun>[a-z][\w ]*): (?P<which>[\w-]+(?: [\w-]+)?)\)", slot)
    if m is None or not (said := re.search(rf"\b{re.escape(m['noun'])}\b", topic)):
        return None
    return f"{topic[:said.start()]}{m['which'].lower()} {topic[said.start():]}".rstrip(".!")


def with_allergen(body: str, turn_text: str) -> str:
    """"nothing with peanuts tho, im allergic": an allergy said without what to is to the allergens the turn
    named ("I'm allergic to peanuts", "... to prawns and crab"); left as said when the turn names none."""
    if not re.search(r"\ballergic$", body):
        return body
    named = list(dict.fromkeys(m["what"].lower() for m in _ALLERGEN.finditer(turn_text)))
    return f"{body} to {' and '.join(named)}" if named else body
