"""Crash safety (issue 16, "the proof"), shared by tests/test_crash_safety.py (5 kills) and
bench/crash_safety.py (100 kills).

A mixed corpus (markdown, text, HTML, a PDF, a conversation transcript) is ingested into one home
uninterrupted, by the commands a user runs: `mnemoflow ingest DIR --no-wait` (landing, extraction,
chunks and turns), then `mnemoflow worker` (the outbox: memory generation, then embeddings). Then
the same commands run in another home, and each process is killed with SIGKILL at a random moment
of its work and started again, until a run ends on its own. Its work begins when it opens the
DuckDB file (seen in /proc/PID/fd, so Linux only), and a kill is drawn uniformly over that work as
the uninterrupted run timed it. Only a SIGKILL that hits a live process counts as a kill.

Then both homes must hold the same thing (`snapshot`): documents, chunks and turns by their
deterministic ids and content hashes; memories, their links, reviews and graph rows by content
(memory ids are random, so a memory is named by its content hash); outbox jobs by key; the ids in
each LanceDB table. And each home on its own (`check_home`): every outbox job done and unleased,
`mnemoflow verify` passes, every LanceDB table holds each id once, with a vector, exactly for the
DuckDB rows that are live and embedded, and no dlt load package waits in the pipelines directory.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pymupdf

from tests.conftest import raw_connection, raw_vectors

TENANT, USER = "acme", "robin"
STEPS = ("ingest", "worker")  # the commands of an ingestion, in order
STEP_TIMEOUT_S = 600.0

# ---------------------------------------------------------------------- the corpus
_PLACES = ["Lisbon", "Ghent", "Porto", "Utrecht", "Bergen", "Tallinn", "Bologna", "Lyon", "Graz", "Aarhus"]
_TOOLS = ["DuckDB", "Postgres", "LanceDB", "Prefect", "Kafka", "Redis", "SQLite", "Spark", "Arrow", "Polars"]
_PEOPLE = ["Ines", "Marek", "Oona", "Tariq", "Yara", "Felix", "Hana", "Kofi", "Sami", "Lara"]
_TOPICS = ("tide gauges", "ferry timetables", "harbour cranes", "lighthouse lamps", "dock cranes",
           "pilot boats", "buoy batteries", "mooring lines", "fog signals", "cargo manifests")


def _session(rng: random.Random, n: int, day: datetime) -> list[dict]:
    """One conversation: the user tells the assistant about home, work, tools and people; some
    sessions move house or change tools (updates), some repeat what was said before (reinforcement)."""
    place, tool, person, other = rng.choice(_PLACES), rng.choice(_TOOLS), rng.choice(_PEOPLE), rng.choice(_PEOPLE)
    lines = [
        ("Robin", "user", f"I live in {place} and I work on {rng.choice(_TOPICS)} for the port authority."),
        ("Assistant", "assistant", "Nice. What do you use for the data?"),
        ("Robin", "user", f"We use {tool} for the sensor readings, and I prefer it over spreadsheets."),
        ("Assistant", "assistant", "Who else is on the team?"),
        ("Robin", "user", f"My colleague {person} leads the {rng.choice(_TOPICS)} project."),
        ("Robin", "user", f"{other} is my sister and she lives in {rng.choice(_PLACES)}."),
    ]
    if n % 3 == 2:
        lines.append(("Robin", "user", f"Actually, I moved to {rng.choice(_PLACES)} last month."))
    if n % 4 == 3:
        lines.append(("Robin", "user", f"I switched from {tool} to {rng.choice(_TOOLS)} this week."))
    return [{"session_id": f"s{n:02d}", "turn_id": f"s{n:02d}-t{i}", "speaker": speaker, "role": role,
             "ts": (day + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"), "text": text}
            for i, (speaker, role, text) in enumerate(lines)]


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(f"The {rng.choice(_TOPICS)} team in {rng.choice(_PLACES)} records readings in "
                    f"{rng.choice(_TOOLS)} every {rng.randint(2, 59)} minutes, checked by {rng.choice(_PEOPLE)}."
                    for _ in range(sentences))


def _pdf(rng: random.Random, pages: int) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page()
        page.insert_text((72, 72), f"Harbour survey, part {n + 1}", fontsize=16)
        page.insert_textbox(pymupdf.Rect(72, 100, 520, 760), _paragraph(rng, 8), fontsize=10)
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


def write_corpus(folder: Path, *, documents: int = 6, sessions: int = 6, seed: int = 16) -> Path:
    """Markdown notes, a text file, an HTML page, a PDF and one transcript of `sessions` conversations,
    the same for a seed. Returns the folder (resolved: document ids are drawn from absolute paths)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(documents):
        sections = "\n\n".join(f"## {rng.choice(_TOPICS).title()} {k}\n\n{_paragraph(rng, 4)}" for k in range(3))
        (folder / f"note-{n:02d}.md").write_text(f"# Harbour note {n}\n\n{sections}\n")
    (folder / "log.txt").write_text("\n\n".join(_paragraph(rng, 3) for _ in range(4)) + "\n")
    items = "".join(f"<li>{_paragraph(rng, 1)}</li>" for _ in range(4))
    (folder / "page.html").write_text(
        f"<html><head><title>Port bulletin</title></head><body><nav>Home | Bulletins</nav><h1>Port bulletin</h1>"
        f"<p>{_paragraph(rng, 3)}</p><h2>Readings</h2><ul>{items}</ul></body></html>")
    (folder / "survey.pdf").write_bytes(_pdf(rng, 3))
    (folder / "chat.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcript(sessions, rng)))
    return folder.resolve()


def transcript(sessions: int, rng: random.Random) -> list[dict]:
    """Turns of `sessions` weekly conversations of one user, the same for the same draws."""
    start = datetime.fromisoformat("2024-03-04T09:00:00+00:00")
    return [t for n in range(sessions) for t in _session(rng, n, start + timedelta(days=7 * n))]


# ---------------------------------------------------------------------- running the commands
def prepare_home(home: Path) -> None:
    """With --store=shared, a home gets a store of its own (a database and a bucket prefix), named in its
    config.toml so that every process given `--home` uses it; its workers beat fast, so a killed one's
    leases are taken over within two seconds."""
    from tests.conftest import _SHARED, _new_shared_store

    if not _SHARED or (home / "config.toml").exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    settings = {k.removeprefix("MNEMOFLOW_").lower(): v for k, v in _new_shared_store().items()}
    settings["worker_heartbeat_s"] = 0.5
    (home / "config.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items()))


def _settings(home: Path) -> Any:
    from mnemoflow.config import load_settings

    return load_settings(home=home)


def command(step: str, corpus: Path, home: Path) -> list[str]:
    tail = ["--home", str(home)]
    if step == "ingest":
        return [sys.executable, "-m", "mnemoflow.cli", "ingest", str(corpus), *tail, "--tenant", TENANT,
                "--user", USER, "--no-wait"]
    return [sys.executable, "-m", "mnemoflow.cli", "worker", *tail]


def _duckdb_path(home: Path) -> Path:
    from mnemoflow.config import load_settings

    return load_settings(home=home).duckdb_path


def _holds(pid: int, path: str) -> bool:
    """Whether process `pid` has `path` open (it has opened the store: its work has begun)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                return True
        except OSError:
            continue
    return False


@dataclass
class Run:
    """One process of a step: its exit status, whether our SIGKILL ended it, and when (seconds from
    its start) it opened the store and ended."""

    pid: int
    returncode: int
    killed: bool
    opened_s: float | None
    ended_s: float
    stderr: str


def run_step(step: str, corpus: Path, home: Path, *, kill_after_s: float | None = None) -> Run:
    """Run one step's command; with `kill_after_s`, SIGKILL it that long after it opened the store (a
    shared store is not a file to watch: after it started)."""
    prepare_home(home)
    store = None if _settings(home).store_url else str(_duckdb_path(home))
    started = time.monotonic()
    process = subprocess.Popen(command(step, corpus, home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    opened = None
    killed = False
    stderr_chunks: list[bytes] = []
    os.set_blocking(process.stderr.fileno(), False)  # type: ignore[union-attr]
    while process.poll() is None:
        now = time.monotonic() - started
        if now > STEP_TIMEOUT_S:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise TimeoutError(f"{step} ran past {STEP_TIMEOUT_S:.0f}s")
        if opened is None and (store is None or _holds(process.pid, store)):
            opened = now
        if kill_after_s is not None and opened is not None and now >= opened + kill_after_s:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
            killed = process.returncode == -signal.SIGKILL
            break
        if chunk := process.stderr.read():  # type: ignore[union-attr]
            stderr_chunks.append(chunk)
        time.sleep(0.003)
    process.wait()
    os.set_blocking(process.stderr.fileno(), True)  # type: ignore[union-attr]
    stderr_chunks.append(process.stderr.read())  # type: ignore[union-attr]
    process.stderr.close()  # type: ignore[union-attr]
    return Run(process.pid, process.returncode, killed, opened, time.monotonic() - started,
               b"".join(stderr_chunks).decode(errors="replace"))


@dataclass
class Timing:
    """How long a step works once it has opened the store, as the uninterrupted run measured it."""

    work_s: dict[str, float] = field(default_factory=dict)


def uninterrupted(corpus: Path, home: Path) -> Timing:
    timing = Timing()
    for step in STEPS:
        run = run_step(step, corpus, home)
        if run.returncode != 0:
            raise RuntimeError(f"the uninterrupted {step} failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
        timing.work_s[step] = run.ended_s - (run.opened_s if run.opened_s is not None else 0.0)
    return timing


@dataclass
class Kill:
    step: str
    after_s: float  # after the process opened the store
    stage: str  # what it was doing (`_stage`)


def _stage(step: str, home: Path, pid: int) -> str:
    """What killed process `pid` was doing, read from what it left in the outbox: a worker holding
    generation or embedding jobs (its leases name its pid, `outbox.worker_id`) was generating or
    embedding; one holding none had not claimed yet (opening the store, loading the model) or had
    done its jobs (refreshing the indexes)."""
    if step == "ingest":
        return "ingest"
    with raw_connection(_settings(home)) as con:
        held = dict(con.execute(
            "SELECT kind, count(*) FILTER (WHERE starts_with(leased_by, ?)) FROM outbox WHERE status = 'pending' "
            "GROUP BY kind", [f"{pid}-"]).fetchall())
    if held.get("generate"):
        return "memory generation"
    if held.get("embed"):
        return "embeddings"
    return "worker start-up" if "generate" in held or "embed" in held else "index refresh"


def plan(timing: Timing, kills: int, rng: random.Random) -> dict[str, list[float]]:
    """`kills` moments drawn uniformly over the work of all the steps together, as (step, seconds
    after the step's process opened the store)."""
    planned: dict[str, list[float]] = {step: [] for step in STEPS}
    total = sum(timing.work_s.values())
    for _ in range(kills):
        at = rng.uniform(0, total)
        for step in STEPS:
            if at < timing.work_s[step] or step == STEPS[-1]:
                planned[step].append(at)
                break
            at -= timing.work_s[step]
    return planned


def interrupted(corpus: Path, home: Path, timing: Timing, kills: int, rng: random.Random) -> list[Kill]:
    """The steps again, each process killed at its planned moment and started again, until a run of
    the step ends on its own. A step can end before its kill (a restart has less to do): that kill
    and the step's others move on to the next step, or are not made after the last. Raises when a
    restarted run fails on its own."""
    planned = plan(timing, kills, rng)
    done: list[Kill] = []
    carried = 0
    for step in STEPS:
        delays = planned[step] + [rng.uniform(0, timing.work_s[step]) for _ in range(carried)]
        while True:
            after = delays.pop(0) if delays else None
            run = run_step(step, corpus, home, kill_after_s=after)
            if run.killed:
                done.append(Kill(step, after or 0.0, _stage(step, home, run.pid)))
                continue
            if run.returncode != 0:
                raise RuntimeError(f"{step} failed after {len(done)} kills (exit {run.returncode}):\n"
                                   f"{run.stderr[-3000:]}")
            carried = len(delays) + (after is not None)
            break
    return done


def spread(total: int, trials: int) -> list[int]:
    """`total` kills over `trials` homes, as evenly as they go."""
    return [total // trials + (n < total % trials) for n in range(trials)]


# ---------------------------------------------------------------------- what a home holds
Snapshot = dict[str, Counter]


def _memory_names(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Memory ids are random: a memory is named by its content (hash) to compare two homes."""
    return {mid: f"memory:{h}" for mid, h in con.execute("SELECT memory_id, content_hash FROM memories").fetchall()}


_TABLES = {
    "documents": "SELECT document_id, content_hash, deleted_at IS NULL FROM source_documents",
    "chunks": "SELECT chunk_id, document_id, content_hash, deleted_at IS NULL FROM chunks",
    "turns": "SELECT turn_key, session_id, turn_id, md5(text) FROM turns",
    "memories": "SELECT memory_id, kind, is_latest, deleted_at IS NULL, reinforcement, embedding_status FROM memories",
    "memory_links": "SELECT src, dst, type, decided_by FROM memory_links",
    "review_queue": "SELECT src, dst, proposed_type, status FROM review_queue",
    "entities": "SELECT entity_id, mention_count FROM entities",
    "memory_entities": "SELECT memory_id, entity_id FROM memory_entities",
    "relations": "SELECT subject, predicate, object, memory_id, superseded_at IS NULL FROM relations",
    "memory_categories": "SELECT memory_id, category_key FROM memory_categories",
    "outbox": "SELECT job_key, kind, status FROM outbox",
}
_LANCE_TABLES = {"chunk_vectors": ("chunk_id", "chunks"), "memory_vectors": ("memory_id", "memories")}


def _named(value: object, names: dict[str, str]) -> object:
    """`value` with every memory id in it (an outbox key holds one between colons) named by content."""
    if isinstance(value, str):
        return ":".join(names.get(part, part) for part in value.split(":"))
    return value


def _lance_rows(home: Path, table: str, id_column: str) -> list[tuple[str, bool]]:
    db = raw_vectors(_settings(home))
    if table not in db.list_tables().tables:
        return []
    data = db.open_table(table).to_lance().to_table(columns=[id_column, "vector"])
    missing = data.column("vector").is_null().to_pylist()
    return [(row_id, not gone) for row_id, gone in zip(data.column(id_column).to_pylist(), missing)]


def snapshot(home: Path) -> Snapshot:
    """What the home holds, named so that two homes compare: each table as a multiset of rows."""
    with raw_connection(_settings(home)) as con:
        names = _memory_names(con)
        found: Snapshot = {}
        for table, sql in _TABLES.items():
            rows = con.execute(sql).fetchall()
            if table == "memories":  # the memory's own id becomes its content
                found[table] = Counter((names[r[0]], *r[1:]) for r in rows)
            else:
                found[table] = Counter(tuple(_named(v, names) for v in r) for r in rows)
    for table, (id_column, _) in _LANCE_TABLES.items():
        found[table] = Counter((_named(i, names), has_vector) for i, has_vector in _lance_rows(home, table, id_column))
    return found


@dataclass
class Difference:
    """Rows of one home against the reference's, table by table, as multisets: a row held twice is
    one duplicated, a row that differs (a memory reinforced once more) one lost and one extra."""

    lost: dict[str, int] = field(default_factory=dict)  # table -> rows the reference has and this home lacks
    duplicated: dict[str, int] = field(default_factory=dict)  # table -> rows this home has beyond the reference
    examples: list[str] = field(default_factory=list)

    @property
    def rows_lost(self) -> int:
        return sum(self.lost.values())

    @property
    def rows_duplicated(self) -> int:
        return sum(self.duplicated.values())


def compare(reference: Snapshot, home: Snapshot) -> Difference:
    difference = Difference()
    for table in reference.keys() | home.keys():
        want, have = reference.get(table, Counter()), home.get(table, Counter())
        lost, extra = want - have, have - want
        if lost:
            difference.lost[table] = sum(lost.values())
            difference.examples += [f"{table}: lost {row}" for row in list(lost)[:3]]
        if extra:
            difference.duplicated[table] = sum(extra.values())
            difference.examples += [f"{table}: extra {row}" for row in list(extra)[:3]]
    return difference


def check_home(home: Path) -> list[str]:
    """What must hold in any home after an ingestion ends, whatever happened to it on the way."""
    problems = []
    with raw_connection(_settings(home)) as con:
        for key, status, leased in con.execute(
                "SELECT job_key, status, lease_until IS NOT NULL FROM outbox WHERE status <> 'done' OR lease_until "
                "IS NOT NULL ORDER BY job_key").fetchall():
            problems.append(f"outbox job {key} is {status}{' and leased' if leased else ''}")
        ready = {target: {r[0]: r[1] for r in con.execute(
            f"SELECT {id_column}, embedding_status FROM {target} WHERE deleted_at IS NULL").fetchall()}
            for id_column, target in _LANCE_TABLES.values()}
    for table, (id_column, target) in _LANCE_TABLES.items():
        rows = _lance_rows(home, table, id_column)
        ids = Counter(i for i, _ in rows)
        problems += [f"{table}: {i} held {n} times" for i, n in ids.items() if n > 1]
        problems += [f"{table}: {i} has no vector" for i, has_vector in rows if not has_vector]
        live = ready[target]
        problems += [f"{target}: {i} is {status}, not embedded" for i, status in live.items() if status != "done"]
        problems += [f"{table}: {i} is not a live {target} row (orphan)" for i in ids.keys() - live.keys()]
        problems += [f"{table}: {i} is missing" for i in live.keys() - ids.keys()]
    verify = subprocess.run([sys.executable, "-m", "mnemoflow.cli", "verify", "--home", str(home)],
                            check=False, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    if verify.returncode != 0:
        problems.append(f"mnemoflow verify failed: {verify.stdout[-1000:]}{verify.stderr[-1000:]}")
    from mnemoflow.config import load_settings

    packages = load_settings(home=home).dlt_dir
    waiting = [p for p in packages.glob("*/load/*/*") if p.parent.name in ("new", "normalized") and p.is_dir()]
    problems += [f"dlt load package left waiting: {p.relative_to(packages)}" for p in waiting]
    return problems


# ---------------------------------------------------------------------- a campaign of kills
@dataclass
class Trial:
    home: Path
    kills: list[Kill]
    difference: Difference
    problems: list[str]  # check_home's, or why the trial could not finish
    seconds: float


@dataclass
class Campaign:
    reference_rows: dict[str, int]  # rows per table of the uninterrupted run
    reference_problems: list[str]
    timing: Timing
    trials: list[Trial] = field(default_factory=list)

    @property
    def kills(self) -> list[Kill]:
        return [k for t in self.trials for k in t.kills]

    @property
    def rows_lost(self) -> int:
        return sum(t.difference.rows_lost for t in self.trials)

    @property
    def rows_duplicated(self) -> int:
        return sum(t.difference.rows_duplicated for t in self.trials)

    @property
    def problems(self) -> list[str]:
        return self.reference_problems + [f"trial {n}: {p}" for n, t in enumerate(self.trials, 1) for p in t.problems]


def campaign(workdir: Path, *, kills: int, per_trial: int, seed: int, documents: int = 6, sessions: int = 6,
             keep_homes: bool = False, on_trial: Callable[[Trial], None] | None = None) -> Campaign:
    """The corpus, its uninterrupted run, then fresh homes of `per_trial` kills each until `kills`
    kills have landed; each home compared with the uninterrupted one and checked. A home that
    passes is removed unless `keep_homes`; one that does not stays for a look."""
    rng = random.Random(seed)
    corpus = write_corpus(workdir / "corpus", documents=documents, sessions=sessions, seed=seed)
    reference = workdir / "uninterrupted"
    timing = uninterrupted(corpus, reference)
    expected = snapshot(reference)
    result = Campaign({t: sum(c.values()) for t, c in expected.items()}, check_home(reference), timing)
    while len(result.kills) < kills and len(result.trials) < 3 * kills:  # a trial may land none of its kills
        home = workdir / f"trial-{len(result.trials) + 1:03d}"
        started = time.monotonic()
        try:
            made = interrupted(corpus, home, timing, min(per_trial, kills - len(result.kills)), rng)
        except (RuntimeError, TimeoutError) as exc:
            result.trials.append(Trial(home, [], Difference(), [str(exc)], time.monotonic() - started))
            break
        trial = Trial(home, made, compare(expected, snapshot(home)), check_home(home), time.monotonic() - started)
        result.trials.append(trial)
        if on_trial:
            on_trial(trial)
        if not keep_homes and not trial.problems and not trial.difference.examples:
            shutil.rmtree(home)
    return result
