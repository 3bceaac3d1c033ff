"""The UPDATES and MAY_UPDATE links the memory engine writes on LoCoMo conversations, by type and by the
first word of their reason, and every link with both memories (to read how many are right).

    .venv/bin/python bench/locomo_links.py --limit 5 --out links.tsv
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from mnemoflow.config import load_settings
from mnemoflow.eval.harness import ingest
from mnemoflow.eval.locomo import locomo_benchmark
from mnemoflow.service import MemoryService

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "locomo")
    parser.add_argument("--limit", type=int, default=5, help="conversations to ingest")
    parser.add_argument("--out", type=Path, help="TSV of the links: type, reason, new memory, old memory")
    args = parser.parse_args()
    benchmark = locomo_benchmark(args.data, limit=args.limit)
    with tempfile.TemporaryDirectory() as scratch, \
            MemoryService(load_settings().scratch(Path(scratch) / "home")) as service:
        ingest(service, benchmark, Path(scratch))
        _, links = service.store.sql(
            "SELECT l.type, l.reason, a.content, b.content FROM memory_links l "
            "JOIN memories a ON a.memory_id = l.src JOIN memories b ON b.memory_id = l.dst "
            "WHERE l.type IN ('UPDATES', 'MAY_UPDATE') ORDER BY l.created_at")
        _, [(memories,)] = service.store.sql("SELECT count(*) FROM memories")
    print(f"{memories} memories, {len(links)} links")
    for (kind, why), n in Counter((r[0], r[1].split(":")[0]) for r in links).most_common():
        print(f"{kind:10} {why:16} {n}")
    if args.out:
        args.out.write_text("".join("\t".join(" ".join(str(x).split()) for x in r) + "\n" for r in links))


if __name__ == "__main__":
    main()
