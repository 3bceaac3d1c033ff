"""A user's profile from their current memories, by rule: a static section (who they are: name,
home, work, family, health and diet, pets, long-standing preferences and standing instructions) and
a dynamic one (what is going on now: plans, projects, recent changes and events). Static lines are
ordered by how plainly they state something stable, then by salience and repetition.

Each memory is read for what it is about (the category taxonomy memory generation files memories
under, `triples.categories_of`) and how it is said: a stable attribute ("lives in", "works as",
"is allergic to") or something in motion ("is planning", "started", "next month"). A past episode
is neither: it is evidence for recall, not a trait; but a change that is no longer recent ("moved to
Bristol", "started working at Arup") says how things stand now (home, work), so it is static. Lines are one
memory each; two memories that say the same thing (cosine similarity >= 0.9) make one line citing
both.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from mnemoflow.memory.relate.triples import categories_of
from mnemoflow.memory.summarize import SAME_SENTENCE, _sentence
from mnemoflow.models import MemoryItem
from mnemoflow.tree_models import ProfileLine, ProfileSection

# what the static section is about: the taxonomy's stable subjects (work: a manager, a team, an office)
STABLE_CATEGORIES = {"family", "health", "pets", "preference", "education", "work"}
_STABLE = re.compile(
    r"\b(?:(?:is|was) (?:named|called)|name is|lives? in|living in|resides? in|(?:is|are) based in|"
    r"(?:home|flat|house|apartment) is in|grew up|(?:is|are|comes?) from|was born|born in|"
    r"\d+ years old|works? (?:as|at|for|in)|is (?:a|an) \w+(?:er|or|ist|ian|ant|ent|ive)\b|retired|married|"
    r"divorced|single|engaged|(?:has|have) (?:a|an|one|two|three|four|\d+) (?:\w+ )?(?:kids?|children|sons?|"
    r"daughters?|brothers?|sisters?|siblings?|dogs?|cats?|pets?|partner|wife|husband)|is (?:the )?(?:mother|father|"
    r"parent|sister|brother|wife|husband|partner) of|allergic|intoleran|vegan|vegetarian|pescatarian|diabetic|"
    r"(?:never|doesn't|does not|can't|cannot|won't) (?:eats?|drinks?)|"
    r"every (?:day|week|morning|evening|night|month))\b", re.I)
_MOVING = re.compile(
    r"\b(?:plans?|planning|planned|(?:is|are|am) going to|will|wants? to|hopes? to|intends? to|about to|is looking "
    r"(?:for|into)|(?:is|are) (?:thinking (?:about|of)|considering)|"
    r"(?:is|are) (?:working on|learning|training|preparing|starting|organi[sz]ing|building|writing|"
    r"saving|moving)|moved to|started|starting|began|recently|currently|"
    r"this (?:week|month|year|summer|winter|spring|fall)|next (?:week|month|year|\w+day)|upcoming|soon|"
    r"new (?:job|role|home|house|project))\b", re.I)
# a change that, once it is no longer recent, is how things stand: the home a move led to, a job begun
_SETTLED = re.compile(
    r"\b(?:(?:moved|relocated) (?:back )?to|started (?:working|a (?:new )?job) (?:at|for|as))\b", re.I)


@dataclass(frozen=True)
class ProfileMemory:
    """A current memory as the profile builder weighs it."""

    memory: MemoryItem
    reinforcement: int
    vector: np.ndarray


def _when(memory: MemoryItem) -> datetime:
    return memory.observed_at or memory.created_at


def section_of(memory: MemoryItem, newest: datetime, window: timedelta) -> ProfileSection | None:
    """Which section a memory belongs in, if any. Something in motion (a plan, a project, a change) is
    dynamic while it is recent (observed within `window` of the user's newest memory) or still
    ahead; a stable attribute, a preference or a standing rule is static; a past episode or
    anything else stays out."""
    text, kind = memory.content, memory.kind
    ahead = memory.event_start_at is not None and memory.event_start_at >= newest - window
    if kind != "rule" and (_MOVING.search(text) or (kind == "episode" and ahead)):
        if ahead or _when(memory) >= newest - window:
            return "dynamic"
        return "static" if _SETTLED.search(text) else None  # where a past move led (home), a job begun
    if kind == "episode":  # something that happened: evidence for recall, not a trait
        return None
    return "static" if _static_evidence(memory) < 3 else None


def _static_evidence(memory: MemoryItem) -> int:
    """How plainly a memory states something stable, strongest first: 0 a stable attribute said as
    one ("lives in", "works as", "is allergic to"), 1 a preference, 2 a standing rule or a subject
    the taxonomy files as stable (family, health, pets, education), 3 none."""
    if _STABLE.search(memory.content) or _SETTLED.search(memory.content):
        return 0
    if memory.kind == "preference":
        return 1
    if memory.kind == "rule" or set(categories_of(memory.content, memory.kind)) & STABLE_CATEGORIES:
        return 2
    return 3


def _weight(m: ProfileMemory) -> float:
    """How much a line earns its place: salience, and being said again (log, so ten repeats are not ten times)."""
    return m.memory.salience * (1 + math.log1p(max(0, m.reinforcement)))


def _lines(section: ProfileSection, chosen: list[ProfileMemory], limit: int) -> list[ProfileLine]:
    """One line per memory, best first; a memory that says what a chosen one says joins its line."""
    lines: list[tuple[ProfileMemory, list[str]]] = []
    for m in chosen:
        same = next((held for held in lines if float(held[0].vector @ m.vector) >= SAME_SENTENCE), None)
        if same is not None:
            same[1].append(m.memory.id)
        elif len(lines) < limit:
            lines.append((m, [m.memory.id]))
    return [ProfileLine(section=section, text=_text(section, m.memory), memory_ids=ids) for m, ids in lines]


def _text(section: ProfileSection, memory: MemoryItem) -> str:
    text = _sentence(memory.content)
    if section == "dynamic":
        when = memory.event_start_at if memory.event_start_at and memory.event_start_at > _when(memory) else None
        stamp = f"{_when(memory):%Y-%m-%d}" + (f", for {when:%Y-%m-%d}" if when else "")
        return f"{text} ({stamp})"
    return text


def build_profile(memories: list[ProfileMemory], *, static_lines: int, dynamic_lines: int,
                  dynamic_days: float) -> list[ProfileLine]:
    """The profile's lines: static ones by weight, then dynamic ones newest first."""
    if not memories:
        return []
    newest = max(_when(m.memory) for m in memories)
    window = timedelta(days=dynamic_days)
    static, dynamic = [], []
    for m in memories:
        section = section_of(m.memory, newest, window)
        if section == "static":
            static.append(m)
        elif section == "dynamic":
            dynamic.append(m)
    static.sort(key=lambda m: (_static_evidence(m.memory), -_weight(m), _when(m.memory), m.memory.id))
    dynamic.sort(key=lambda m: (-_when(m.memory).timestamp(), -_weight(m), m.memory.id))
    return _lines("static", static, static_lines) + _lines("dynamic", dynamic, dynamic_lines)
