"""Recall's weights, depths and signals as one object with named presets (search as data)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mnemoflow.errors import BadInputError

Signal = Literal["vector", "bm25"]
TreeUse = Literal["off", "broad", "ranked"]
Target = Literal["memories", "chunks"]
GraphLink = Literal["EXTENDS", "DERIVES", "UPDATES", "RELATES_TO"]
DEFAULT_GRAPH_LINKS: tuple[GraphLink, ...] = ("EXTENDS", "DERIVES", "UPDATES")


class RecallConfig(BaseModel):
    """How recall gathers, fuses and packs candidates."""

    name: str
    signals: dict[Signal, float] = Field(description="Signals to run and their weight in the fusion.")
    targets: tuple[Target, ...] = Field(
        ("memories", "chunks"),
        description="What each signal searches; a signal's hits over all targets form one ranked list, "
        "so a lone weak memory cannot outrank the best chunk just by topping a list of its own.",
    )
    depth: int = Field(
        100, ge=1, description="Candidates each signal contributes per target (LoCoMo: 100 recalls as much as "
        "200; at 100k chunks it saves ~10 ms).",
    )
    rrf_k: int = Field(10, ge=1, description="Reciprocal-rank-fusion constant; small k trusts the top ranks.")
    speaker_factor: float = Field(
        0.5, gt=0, le=1,
        description="When the query names a conversation participant, turns spoken only by others are "
        "scaled by this (1 turns it off).",
    )
    drop_restated_memories: bool = Field(
        False, description="Leave out a memory whose source turns the context shows word for word (their chunks "
        "are packed, before or after it): the turns already say it, with speaker and date (packing.py). Off by "
        "default: recall then returns the memories themselves, with their resolved dates and current versions.",
    )
    group_sessions: bool = Field(
        True, description="Pack conversation turns under one date header per session instead of one per turn."
    )
    # Memory reranking: factors centred on 1 (1 -/+ weight / 2), so memories as a whole neither gain nor
    # lose against chunks; chunks, scored as before, are never moved among themselves.
    salience_weight: float = Field(
        0.2, ge=0, le=1,
        description="A memory's score is scaled by 1 + w * (salience - 0.5): from 1 - w/2 (salience 0) to "
        "1 + w/2 (salience 1); 0 turns it off.",
    )
    recency_weight: float = Field(
        0.2, ge=0, le=1,
        description="A memory's score is scaled by 1 + w * (0.5 ** (age / half-life) - 0.5), its age counted "
        "from when it was observed back to the newest memory candidate (so an old store is not judged by the "
        "wall clock): the newest gets 1 + w/2, one half-life older 1, far older 1 - w/2; 0 turns it off.",
    )
    recency_half_life_days: float = Field(
        30.0, gt=0, description="Age (days before the newest candidate) at which the recency term has halved."
    )
    # Bounded graph expansion from the top memories (DESIGN.md: recall -> rerank -> graph expansion).
    graph: bool = Field(
        True, description="Expand from the top-ranked memories along links and shared entities (False ablates it).",
    )
    graph_seeds: int = Field(5, ge=0, description="How many top-ranked memories expansion starts from.")
    graph_chunk_seeds: int = Field(
        0, ge=0,
        description="How many top-ranked chunks also seed expansion: memories EXTRACTED_FROM them join as "
        "candidates (0: off; the chunk itself already carries what they say).",
    )
    graph_depth: int = Field(1, ge=1, description="Hops expansion may go from a seed.")
    graph_max_items: int = Field(8, ge=0, description="At most this many memories expansion adds.")
    graph_links: tuple[GraphLink, ...] = Field(
        DEFAULT_GRAPH_LINKS,
        description="Link types followed: EXTENDS and DERIVES both ways, UPDATES only towards the newer version.",
    )
    graph_entities: bool = Field(
        True, description="Also follow entities shared with a seed (a memory about the same person, place, ...).",
    )
    graph_skip_speakers: bool = Field(
        True, description="Do not follow the entity of a person who said the turns a seed memory was read from: "
        "nearly every memory read from their turns names them, so it links a seed to arbitrary memories.",
    )
    graph_hop_factor: float = Field(
        0.5, gt=0, lt=1,
        description="A memory reached over a link scores what it was reached from times this per hop, times its "
        "own salience and recency factors, and always below the memory it was reached from.",
    )
    graph_entity_factor: float = Field(
        0.35, gt=0, lt=1,
        description="As graph_hop_factor, for a memory reached through a shared entity (a weaker relation).",
    )

    # The memory tree (maintenance jobs seal, profiles, cluster): what of it recall may pack.
    summaries: TreeUse = Field(
        "broad", description="Sealed summaries: 'broad' packs the best ones first for a query that asks for an "
        "overview ('summarise the trip planning', 'what did we talk about in March?'; recall/intent.py) and none "
        "otherwise; 'ranked' lets them compete with memories and chunks in every query's fusion; 'off'.",
    )
    summary_max_items: int = Field(2, ge=0, description="At most this many summaries in a context.")
    summary_max_share: float = Field(
        0.5, gt=0, le=1, description="Summaries packed first for a broad query take at most this share of the budget.",
    )
    profile: TreeUse = Field(
        "broad", description="The user's profile: 'broad' packs its lines first for a query about a person as a "
        "whole ('what do you know about me?', 'who is Maya?'); 'ranked' offers them to every query after the "
        "evidence it outranks; 'off'.",
    )
    profile_max_share: float = Field(
        0.25, gt=0, le=1, description="Profile lines packed first take at most this share of the budget.",
    )
    excerpt_share: float = Field(
        0.25, gt=0, le=1, description="A chunk longer than this share of the budget is shown as its sentences that "
        "share most words with the query (excerpt.py), so one long passage cannot fill a small context; 1 turns "
        "it off.",
    )
    later_parts_last: bool = Field(
        True, description="A second piece of a turn already in the context (a long answer cut into parts) is "
        "offered only after every other candidate, so one long answer cannot fill the context (packing.py).",
    )
    language_gate: bool = Field(
        True, description="Leave the vector signal out of a Chinese, Japanese or Korean query when the embedder reads "
        "English only (embedding.base.ENGLISH_ONLY_MODELS: all-MiniLM-L6-v2), which there ranks worse than BM25 "
        "alone (bench/README.md); recall warns that it did.",
    )
    newer_first: bool = Field(
        True, description="Among the top candidates, those said by the same person whose vectors are nearer than "
        "newer_first_at (about one thing of theirs): the newest moves to just above the highest of them, which keeps "
        "its place but one (recall/currency.py), so a value said again later outranks the one it replaced.",
    )
    newer_first_at: float = Field(
        0.7, ge=0, le=1, description="Cosine similarity of two candidates' vectors from which they are about the "
        "same subject, as memory/relate/versions.MAY_UPDATE_AT: below it, one person's name weighs so much in "
        "short sentences that unrelated facts of theirs come this near ('Alex's quarterly report is due on "
        "March 8' / 'Alex is going in April', 0.69), and a newer one would displace the answer.",
    )
    newer_first_query_share: float = Field(
        0.3, ge=0, le=1, description="For a question about what holds now (recall/intent.asks_about_now), two "
        "candidates of one person's that are each at least this share of the best candidate's similarity to the "
        "question are about one thing of theirs, however far apart their own words are.",
    )
    newer_first_depth: int = Field(30, ge=0, description="How many of the top candidates newer_first looks at.")
    possible_updates: bool = Field(
        True, description="The newer memory of a MAY_UPDATE pair is put above the older, and the older is marked "
        "'possibly superseded by ...' in its why and its line (recall/currency.py).",
    )
    topic_boost: float = Field(
        0.0, ge=0, description="Memories of the query's topic (the one most of its top memories share) score "
        "x (1 + this); 0 turns the signal off.",
    )


_PLAIN: dict = {"excerpt_share": 1.0, "later_parts_last": False, "salience_weight": 0.0, "recency_weight": 0.0,
                "graph": False, "summaries": "off", "profile": "off", "language_gate": False, "newer_first": False,
                "possible_updates": False}

PRESETS: dict[str, RecallConfig] = {
    # Measured on LoCoMo (bench/README.md): BM25 leads at the top ranks, the dense signal fills in.
    "default": RecallConfig(name="default", signals={"vector": 1.0, "bm25": 1.5}),
    # Summaries on every query, fused with the evidence (at most summary_max_items): on LoCoMo they cost
    # evidence at 512 tokens and change nothing at 2048 (bench/README.md), so the default packs them
    # only for queries that ask for an overview.
    "summaries": RecallConfig(name="summaries", signals={"vector": 1.0, "bm25": 1.5}, summaries="ranked"),
    # The two baselines the evaluation compares against, run through the same harness.
    # Plain fusion: no memory rerank, no graph.
    "bm25": RecallConfig(name="bm25", signals={"bm25": 1.0}, rrf_k=60, speaker_factor=1.0, group_sessions=False,
                         **_PLAIN),
    "rrf": RecallConfig(name="rrf", signals={"vector": 1.0, "bm25": 1.0}, rrf_k=60, speaker_factor=1.0,
                        group_sessions=False, **_PLAIN),
}


PresetName = Literal["default", "summaries", "bm25", "rrf"]  # PRESETS' names, for schemas that state them


def preset(name: str) -> RecallConfig:
    """A preset by name; BadInputError naming the presets for any other name."""
    try:
        return PRESETS[name]
    except KeyError:
        raise BadInputError(f"unknown recall preset {name!r}; choose one of {', '.join(PRESETS)}") from None


class RecallFilters(BaseModel):
    """Narrow what recall may return."""

    kinds: list[Literal["memory", "chunk", "summary", "profile"]] | None = None
    include_history: bool = Field(
        False, description="Also return memories that are no longer current (superseded, past valid_to, "
        "expired, archived by decay), each marked as such (scores['history'] = 1, why says by what); deleted "
        "memories never.",
    )
    memory_ids: list[str] | None = Field(
        None, description="Return no memories but these (what a filtered search matched); chunks as usual.",
    )
