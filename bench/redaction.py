"""PII redaction: what it costs beside the embedder, and what it finds on real conversation text.

Every LoCoMo turn (real chat, no personal numbers in it) is redacted as it is, then with one
personal value of each kind written into a share of the turns. Reported: turns per second of the
redactor and of the local embedder on the same texts (the baseline: every stored text is embedded,
so the ratio is redaction's share of the work), the placeholders found in the untouched turns
(false positives: every one is one), and how many of the planted values were found.

    .venv/bin/python bench/redaction.py --turns 2000
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from common import LOCOMO, RESULTS, locomo_rows

from mnemoflow.config import load_settings
from mnemoflow.embedding import create_embedder
from mnemoflow.protect.pii import CARD, EMAIL, IBAN, NATIONAL_ID, PHONE, Redactor

PLANTED = {  # each value passes its own check; the bench writes them into sentences of their own
    CARD: ["4111 1111 1111 1111", "5500-0000-0000-0004", "3400 000000 00009"],
    EMAIL: ["mara.v@example.org", "j_smith+billing@mail.example.co.uk"],
    PHONE: ["+1 415 555 2671", "(212) 555-0147", "+44 20 7946 0958"],
    IBAN: ["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432"],
    NATIONAL_ID: ["536-90-4321", "12345678Z"],
}
FRAMES = ["You can reach me at {}.", "My number is {} if you need it.", "Use {} for the payment.",
          "Send it to {} please."]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--share", type=float, default=0.1, help="Share of turns given a planted value.")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="The LoCoMo data directory.")
    args = parser.parse_args()
    texts = [r["text"] for r in locomo_rows(args.locomo)][: args.turns]
    rng = random.Random(3)
    planted: list[tuple[int, str]] = []
    mixed = list(texts)
    for i in rng.sample(range(len(texts)), int(len(texts) * args.share)):
        kind = rng.choice(sorted(PLANTED))
        mixed[i] = f"{texts[i]} {rng.choice(FRAMES).format(rng.choice(PLANTED[kind]))}"
        planted.append((i, kind))
    redactor = Redactor("US")
    redactor.text("warm up 4111 1111 1111 1111")

    started = time.perf_counter()
    clean_found = [redactor.findings(t) for t in texts]
    clean_s = time.perf_counter() - started
    started = time.perf_counter()
    mixed_out = [redactor.text(t) for t in mixed]
    mixed_s = time.perf_counter() - started

    embedder = create_embedder(load_settings())
    embedder.embed(texts[:64])
    started = time.perf_counter()
    embedder.embed(mixed)
    embed_s = time.perf_counter() - started

    false_positives = [(t, f) for t, f in zip(texts, clean_found, strict=True) if f]
    found = sum(kind in mixed_out[i] for i, kind in planted)
    result = {
        "turns": len(texts), "planted": len(planted), "planted_found": found,
        "false_positive_turns": len(false_positives), "false_positive_examples": false_positives[:10],
        "redact_turns_per_s_clean": round(len(texts) / clean_s), "redact_turns_per_s_mixed": round(len(mixed) / mixed_s),
        "embed_turns_per_s": round(len(mixed) / embed_s), "redact_vs_embed_time": round(mixed_s / embed_s, 3),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "redaction.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
