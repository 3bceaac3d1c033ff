"""HTML: the article without the page's furniture, cited by heading path; odd pages fail cleanly."""

import time
from pathlib import Path

import pytest
import trafilatura

import mnemoflow.extractors.html  # noqa: F401  (registers text/html)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "alex")

PAGE = """<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Runbook: Staging Database | Acme Docs</title>
<meta property="og:title" content="Runbook: Staging Database">
<style>body { font-family: sans-serif; }</style>
</head><body>
<header><div class="logo">Acme Docs</div>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/pricing">Pricing plans</a></li>
    <li><a href="/blog">Engineering blog</a></li></ul></nav>
</header>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. Accept all cookies?</div>
<div class="sidebar"><h3>Related articles</h3>
  <ul><li><a href="/k8s">Kubernetes upgrade notes</a></li><li><a href="/billing">Billing FAQ</a></li></ul></div>
<main><article>
<h1>Staging Database Runbook</h1>
<p>This runbook explains how the platform team operates the staging database and what to do when it
fails.</p>
<h2>Failover</h2>
<p>When the primary node stops answering, promote the replica in eu-west-1 and update the connection
string in the vault.</p>
<h3>Checking replication lag</h3>
<p>Before promoting the replica, check that replication lag is under five seconds in the
pg_stat_replication view.</p>
<h2>Backups</h2>
<p>Nightly backups run at 02:00 UTC and go to the cold storage bucket.</p>
<table><tr><th>Environment</th><th>Retention</th></tr>
  <tr><td>staging</td><td>30 days</td></tr><tr><td>production</td><td>90 days</td></tr></table>
</article></main>
<footer><p>© 2024 Acme Corp. All rights reserved.</p>
  <p><a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of service</a></p></footer>
<script>window.analytics = "tracking-snippet";</script>
</body></html>
"""


def extract(data: bytes, settings: Settings, name: str = "page.html") -> Extracted:
    return extractor_for("text/html")(data, name, settings)


def test_main_content_keeps_headings_and_drops_the_furniture(settings: Settings) -> None:
    extracted = extract(PAGE.encode(), settings)

    assert extracted.title == "Runbook: Staging Database"
    assert extracted.layout == "markdown"
    for boilerplate in ("Accept all cookies", "Pricing plans", "Engineering blog", "Related articles",
                        "Kubernetes upgrade notes", "All rights reserved", "Privacy policy", "tracking-snippet",
                        "font-family"):
        assert boilerplate not in extracted.text
    assert "pg_stat_replication" in extracted.text  # not markdown-escaped (pg\_stat\_replication)

    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    by_path = {tuple(c.locator["heading_path"]): c for c in chunks}
    assert list(by_path) == [
        ("Staging Database Runbook",),
        ("Staging Database Runbook", "Failover"),
        ("Staging Database Runbook", "Failover", "Checking replication lag"),
        ("Staging Database Runbook", "Backups"),
    ]
    assert "five seconds" in by_path["Staging Database Runbook", "Failover", "Checking replication lag"].text
    assert "| staging | 30 days |" in by_path["Staging Database Runbook", "Backups"].text
    assert by_path["Staging Database Runbook", "Backups"].context == "Staging Database Runbook > Backups"


def test_declared_latin1_is_read_as_browsers_read_it(settings: Settings) -> None:
    page = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
            "<title>Cr\xe8me br\xfbl\xe9e</title></head><body><article><h1>Cr\xe8me br\xfbl\xe9e</h1>"
            "<p>Le caf\xe9 na\xeff sert une cr\xe8me br\xfbl\xe9e \x93maison\x94 tous les vendredis.</p>"
            "</article></body></html>")
    extracted = extract(page.encode("latin-1"), settings)

    assert extracted.title == "Crème brûlée"
    # windows-1252, as browsers read latin-1: 0x93 and 0x94 are curly quotes
    assert "Le café naïf sert une crème brûlée “maison” tous les vendredis." in extracted.text
    assert "Ã" not in extracted.text


@pytest.mark.parametrize(("head", "encoding"), [
    ('<meta charset="windows-1251">', "cp1251"),
    ('<meta charset="koi8-r">', "koi8_r"),
    ("", "utf-16"),  # a BOM, no declaration
    ("", "utf-8"),
])
def test_the_declared_charset_or_bom_decides(settings: Settings, head: str, encoding: str) -> None:
    sentence = "Склад в Казани закрывается в пятницу в шесть часов вечера."
    page = f"<html><head>{head}<title>Склад</title></head><body><p>{sentence}</p></body></html>"

    assert sentence in extract(page.encode(encoding), settings).text


def test_deeply_nested_page_fails_fast_with_a_reason(settings: Settings) -> None:
    depth = 100_000
    page = "<html><body>" + "<div>" * depth + "<p>Buried sentence.</p>" + "</div>" * depth + "</body></html>"

    started = time.monotonic()
    with pytest.raises(BadInputError, match="parser's limits .*depth"):
        extract(page.encode(), settings)
    assert time.monotonic() - started < 10


def test_a_page_of_links_keeps_them_and_a_page_of_furniture_is_refused(settings: Settings) -> None:
    links = b"<html><head><title>Tools</title></head><body><h1>Useful tools</h1><ul><li><a href='/rg'>ripgrep</a>" \
            b"</li><li><a href='/fd'>fd</a></li><li><a href='/jq'>jq</a></li></ul></body></html>"
    extracted = extract(links, settings)
    assert extracted.text.split() == ["#", "Useful", "tools", "-", "ripgrep", "-", "fd", "-", "jq"]

    nav_only = b"<html><head><title>Site map</title></head><body><nav><a href='/'>Home</a> <a href='/p'>Pricing</a>" \
               b" <a href='/b'>Blog</a></nav></body></html>"
    with pytest.raises(BadInputError, match="no text: the page holds only navigation"):
        extract(nav_only, settings)

    furniture_only = b"<html><body><nav></nav><footer>(c) Acme</footer><script>x = 1</script></body></html>"
    for empty in (b"", b"  \n", furniture_only):
        with pytest.raises(BadInputError, match="empty file|no text"):
            extract(empty, settings)
    with pytest.raises(BadInputError, match="binary"):
        extract(b"\x00\x01PNG\x00", settings)


def test_every_block_with_headings_when_no_main_content_is_found(settings: Settings,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trafilatura, "extract", lambda *args, **kwargs: None)
    extracted = extract(PAGE.encode(), settings)

    assert (extracted.layout, extracted.metadata["content"]) == ("markdown", "body")
    assert "promote the replica in eu-west-1" in extracted.text
    for furniture in ("tracking-snippet", "font-family", "Accept all cookies", "Pricing plans", "All rights reserved"):
        assert furniture not in extracted.text
    paths = {tuple(c.locator["heading_path"]) for c in chunk_extracted("doc", extracted, settings.chunk_max_tokens)}
    assert ("Staging Database Runbook", "Failover", "Checking replication lag") in paths


def test_recall_cites_the_section_of_an_ingested_page(service: MemoryService, tmp_path: Path) -> None:
    page = tmp_path / "runbook.html"
    page.write_text(PAGE)
    deep = tmp_path / "deep.html"
    deep.write_text("<html><body>" + "<div>" * 5_000 + "text" + "</div>" * 5_000 + "</body></html>")

    outcome = service.ingest(SCOPE, [page, deep])

    assert [Path(e.uri).name for e in outcome.report.errors] == ["deep.html"]
    hit = service.recall(SCOPE, "how much replication lag is acceptable before promoting?", k=3).items[0]
    assert hit.citations[0].title == "Runbook: Staging Database"
    assert hit.citations[0].locator["heading_path"] == [
        "Staging Database Runbook", "Failover", "Checking replication lag"]
