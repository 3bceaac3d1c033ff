"""Code extraction speed (files/s): our extractor + chunker beside a bare tree-sitter parse, same files, same run.

Corpus: Python files of installed packages and the JavaScript of Prefect's UI (real code, minified
bundles included), plus generated TypeScript, Go, Rust and Java (no such sources ship offline).
Deterministic for the arguments. Measured, median of the repeats:

- raw: `get_parser(language).parse(data)` per file, nothing else;
- ours: the registered extractor (decode, parse, symbols, units) and `chunk_extracted`;
- full path: `MemoryService.ingest` of a smaller mixed subset (discovery, extraction, DuckDB,
  embedding with the local model, LanceDB, index refresh), after a warm-up ingest, beside the
  embedder alone on the same chunk texts.

    .venv/bin/python bench/extract_code.py --python-files 500 --js-files 100 --generated 50 --ingest-files 150
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from common import RESULTS, Files, median_pass_seconds, peak_rss_mb, timed_ingest
from tree_sitter_language_pack import get_parser

import mnemoflow.extractors.code  # noqa: F401  (registers the code MIME types)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import load_settings
from mnemoflow.extractors import extractor_for, mime_for
from mnemoflow.extractors.code import LANGUAGES

SITE_PACKAGES = Path(__file__).resolve().parent.parent / ".venv" / "lib" / "python3.11" / "site-packages"
PACKAGES = ("dlt", "prefect", "rich", "pydantic", "click")
SETTINGS = load_settings(Path(tempfile.gettempdir()) / "mnemoflow-bench-code-settings")

Corpus = Files


def every_nth(paths: list[Path], n: int) -> list[Path]:
    """n paths spread evenly over a sorted list: deterministic, and not just the first directory."""
    usable = [p for p in sorted(paths) if p.read_bytes().strip() and p.stat().st_size <= SETTINGS.code_max_bytes]
    return usable[:: max(1, len(usable) // max(n, 1))][:n]


def real_files(python_files: int, js_files: int) -> Corpus:
    chosen: list[Path] = []
    for package in PACKAGES:
        chosen += every_nth(list((SITE_PACKAGES / package).rglob("*.py")), python_files // len(PACKAGES))
    chosen += every_nth(list((SITE_PACKAGES / "prefect" / "server").rglob("*.js")), js_files)
    return [(str(p.relative_to(SITE_PACKAGES)), p.read_bytes()) for p in chosen]


# ---------------------------------------------------------------------- generated sources
WORDS = ("account batch cache cursor event filter index item ledger lease order page queue record retry "
         "schema session shard snapshot token window").split()
STATEMENTS = {  # {a}, {b}: identifiers; {n}: a number; {w}: a word
    "c": ["if ({a} == null) {{ throw new Error(\"{w} missing\"); }}", "{a} = {b} + {n};",
          "while ({a} < {n}) {{\n  {a} += {b};\n}}", "log(\"{w} {a}\", {b});",
          "{a} = compute{W}({a}, {b});"],
    "go": ["if {a} == nil {{\n\treturn 0, fmt.Errorf(\"{w} missing\")\n}}", "{a} = {b} + {n}",
           "for i := 0; i < {n}; i++ {{\n\t{a} += i * {b}\n}}", "log.Printf(\"{w} %v\", {a})",
           "{a} = compute{W}({a}, {b})"],
    "rust": ["if {a}.is_empty() {{\n    return Err(Error::new(\"{w} missing\"));\n}}", "let {a} = {b} + {n};",
             "for i in 0..{n} {{\n    total += i * {b};\n}}", "log::info!(\"{w} {{}}\", {a});",
             "let {a} = compute_{w}(&{a}, {b})?;"],
}


def _body(rng: random.Random, style: str, indent: str) -> str:
    lines = []
    for _ in range(rng.randint(2, 14)):
        a, b, w = rng.sample(WORDS, 3)
        text = rng.choice(STATEMENTS[style]).format(a=a, b=b, w=w, W=w.title(), n=rng.randint(2, 99))
        lines += [indent + line for line in text.split("\n")]
    return "\n".join(lines) + "\n"


def generated_file(language: str, seed: int) -> tuple[str, str]:
    """One plausible source file: a few types with fields and methods, and free functions."""
    rng = random.Random(seed)
    names = [w.title() + rng.choice(("Store", "Service", "Handler", "Index", "Client")) for w in rng.sample(WORDS, 4)]
    funcs = [f"{rng.choice(('load', 'save', 'merge', 'check'))}{w.title()}" for w in rng.sample(WORDS, 4)]
    out: list[str] = []
    if language == "go":
        out.append(f"package {rng.choice(WORDS)}\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n")
        for t in names:
            fields = "".join(f"\t{w} int\n" for w in rng.sample(WORDS, 3))
            out.append(f"// {t} keeps {rng.choice(WORDS)}s.\ntype {t} struct {{\n{fields}}}\n")
            for f in funcs:
                out.append(f"func (r *{t}) {f.title()}(account int, batch int) (int, error) {{\n"
                           f"{_body(rng, 'go', chr(9))}\treturn account, nil\n}}\n")
        out += [f"func {f}(cache int, item int) int {{\n{_body(rng, 'go', chr(9))}\treturn cache\n}}\n" for f in funcs]
    elif language == "rust":
        out.append("use std::collections::HashMap;\n")
        for t in names:
            fields = "".join(f"    {w}: u64,\n" for w in rng.sample(WORDS, 3))
            out.append(f"/// Keeps {rng.choice(WORDS)}s.\n#[derive(Debug, Clone)]\npub struct {t} {{\n{fields}}}\n")
            methods = [f"    pub fn {f.lower()}(&mut self, account: u64) -> Result<u64, Error> {{\n"
                       f"{_body(rng, 'rust', ' ' * 8)}        Ok(account)\n    }}\n" for f in funcs]
            out.append(f"impl {t} {{\n" + "\n".join(methods) + "}\n")
        out += [f"pub fn {f.lower()}(cache: &str) -> Result<u64, Error> {{\n{_body(rng, 'rust', '    ')}    Ok(1)\n}}\n"
                for f in funcs]
    elif language == "java":
        out.append(f"package org.{rng.choice(WORDS)};\n\nimport java.util.Map;\n")
        for t in names:
            fields = "".join(f"    private int {w};\n" for w in rng.sample(WORDS, 3))
            methods = [f"    /** Updates the {rng.choice(WORDS)}. */\n    public int {f}(int account, int batch) {{\n"
                       f"{_body(rng, 'c', ' ' * 8)}        return account;\n    }}\n" for f in funcs]
            out.append(f"class {t} {{\n{fields}\n    public {t}() {{}}\n\n" + "\n".join(methods) + "}\n")
    else:  # typescript
        out.append(f"import {{ log }} from \"./{rng.choice(WORDS)}\";\n")
        for t in names:
            fields = "".join(f"  private {w} = {rng.randint(0, 9)};\n" for w in rng.sample(WORDS, 3))
            methods = [f"  async {f}(account: number, batch: number): Promise<number> {{\n"
                       f"{_body(rng, 'c', '    ')}    return account;\n  }}\n" for f in funcs]
            out.append(f"export class {t} {{\n{fields}\n" + "\n".join(methods) + "}\n")
        out += [f"export const {f} = (cache: number, item: number): number => {{\n{_body(rng, 'c', '  ')}"
                f"  return cache;\n}};\n" for f in funcs]
    suffix = {"go": ".go", "rust": ".rs", "java": ".java", "typescript": ".ts"}[language]
    return f"generated/{language}/{names[0]}{seed}{suffix}", "\n".join(out)


def generated_files(per_language: int) -> Corpus:
    return [(path, text.encode()) for language in ("typescript", "go", "rust", "java")
            for path, text in (generated_file(language, seed) for seed in range(per_language))]


# ---------------------------------------------------------------------- measurements
def language_of(path: str) -> str:
    return LANGUAGES[mime_for(path)]


def raw_parse(path: str, data: bytes) -> object:
    return get_parser(language_of(path)).parse(data)


def ours(path: str, data: bytes) -> object:
    extracted = extractor_for(mime_for(path))(data, Path(path).name, SETTINGS)
    return chunk_extracted("doc", extracted, SETTINGS.chunk_max_tokens)


def full_ingest(corpus: Corpus, warmup: Corpus) -> dict:
    texts = [chunk.text for path, data in corpus for chunk in ours(path, data)]
    outcome, seconds, embed_seconds = timed_ingest(corpus, warmup, "code", texts)
    chunks = outcome.report.chunks_added
    return {"files": len(corpus), "chunks": chunks, "seconds": round(seconds, 2),
            "files_per_s": round(len(corpus) / seconds, 1), "chunks_per_s": round(chunks / seconds, 1),
            "embedder_alone_chunks_per_s": round(len(texts) / embed_seconds, 1),
            "ratio_to_embedder_alone": round(embed_seconds / seconds, 3)}


def rates(files: Corpus, repeats: int) -> dict:
    raw_s, ours_s = median_pass_seconds(files, raw_parse, repeats), median_pass_seconds(files, ours, repeats)
    return {"files": len(files), "mb": round(sum(len(d) for _, d in files) / 1e6, 2),
            "raw_parse_files_per_s": round(len(files) / raw_s, 1), "ours_files_per_s": round(len(files) / ours_s, 1),
            "ratio_ours_to_raw": round(raw_s / ours_s, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-files", type=int, default=500)
    parser.add_argument("--js-files", type=int, default=100)
    parser.add_argument("--generated", type=int, default=50, help="generated files per language: ts, go, rust, java")
    parser.add_argument("--ingest-files", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    corpus = real_files(args.python_files, args.js_files) + generated_files(args.generated)
    by_language: dict[str, Corpus] = {}
    for path, data in corpus:
        by_language.setdefault(language_of(path), []).append((path, data))
    for files in by_language.values():
        ours(*files[0])  # load the grammar and compile the query outside the timing

    rows = {}
    for language, files in sorted(by_language.items()):
        rows[language] = rates(files, args.repeats)
        print(language, rows[language])
    overall = rates(corpus, args.repeats)
    chunks = sum(len(ours(path, data)) for path, data in corpus)

    subset = corpus[:: max(1, len(corpus) // args.ingest_files)][: args.ingest_files]
    warmup = [(path, text.encode()) for path, text in (generated_file(language, 10_000) for language in ("go", "java"))]
    ingest = full_ingest(subset, warmup)
    result = {
        **overall, "chunks": chunks, "repeats": args.repeats, "by_language": rows,
        "full_ingest": ingest,
        "peak_rss_mb": round(peak_rss_mb()),
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extract_code.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
