"""Issue 16: navigation, banners and menus never reach a chunk, and the heading path is kept, on a
page of any size, with or without <main>/<article>.

trafilatura reads a short page with its baseline (the whole body, headings flattened) and a page
whose text sits straight in <body> without its headings, so every kind of furniture is tried on a
one-paragraph page and on a long one, in each kind of container.
"""

from __future__ import annotations

import pytest

import mnemoflow.extractors.html  # noqa: F401  (registers text/html)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.extractors import extractor_for
from mnemoflow.models import ChunkRecord

# Each piece of furniture carries words found nowhere else, so any leak shows.
FURNITURE = {
    "nav": "<nav>Zebrafish portal | Quokka careers</nav>",
    "nav-list": "<nav><ul><li><a href='/'>Zebrafish portal</a></li><li><a href='/c'>Quokka careers</a></li></ul></nav>",
    "role-navigation": "<div role='navigation'><a href='/'>Zebrafish portal</a> <a href='/c'>Quokka careers</a></div>",
    "header": "<header><div class='logo'>Zebrafish portal</div><a href='/c'>Quokka careers</a></header>",
    "footer": "<footer><p>Zebrafish portal Ltd, Quokka careers</p><p>All rights reserved.</p></footer>",
    "cookie-banner": "<div id='cookie-banner'>Zebrafish portal uses cookies. <button>Quokka careers</button></div>",
    "consent-dialog": "<div class='consent-modal' role='dialog'><p>We and our Zebrafish portal partners value "
                      "your privacy.</p><a href='/p'>Quokka careers</a></div>",
    "menu-of-links": "<ul><li><a href='/'>Zebrafish portal</a></li><li><a href='/c'>Quokka careers</a></li>"
                     "<li><a href='/b'>Blog</a></li></ul>",
    "named-menu": "<div class='main-menu'><a href='/'>Zebrafish portal</a> for teams, "
                  "<a href='/c'>Quokka careers</a></div>",
    "breadcrumb": "<div class='breadcrumbs'><a href='/'>Zebrafish portal</a> › <a href='/d'>Docs</a> › "
                  "Quokka careers</div>",
    "links-bar": "<div><a href='/'>Zebrafish portal</a> · <a href='/c'>Quokka careers</a> · <a href='/x'>Help</a></div>",
}
LEAKS = ("Zebrafish", "Quokka", "rights reserved")

SENTENCE = ("Version 7.3 adds offline sync for shared notebooks; release {n} of the sync engine resolves conflicts "
            "when two devices edit the same note and keeps a history of every merge.")


def content(size: str) -> str:
    if size == "small":
        return f"<h1>Release notes</h1><h2>Sync</h2><p>{SENTENCE.format(n=0)}</p>"
    paragraphs = "".join(f"<p>{SENTENCE.format(n=n)}</p>" for n in range(12))
    return (f"<h1>Release notes</h1><p>Everything that changed in this release.</p><h2>Sync</h2>{paragraphs}"
            f"<h2>Export</h2><p>Exports now include attachments.</p>{paragraphs}")


def page(furniture: str, container: str, size: str) -> bytes:
    body = content(size)
    if container != "none":
        body = f"<{container}>{body}</{container}>"
    piece = FURNITURE[furniture]
    at_end = furniture == "footer"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Release notes</title></head><body>"
            f"{'' if at_end else piece}{body}{piece if at_end else ''}</body></html>").encode()


def chunks_of(data: bytes, settings: Settings) -> list[ChunkRecord]:
    extracted = extractor_for("text/html")(data, "notes.html", settings)
    assert extracted.layout == "markdown"
    return chunk_extracted("doc", extracted, settings.chunk_max_tokens)


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("container", ["none", "main", "article"])
@pytest.mark.parametrize("furniture", sorted(FURNITURE))
def test_furniture_never_reaches_a_chunk_and_headings_stay(settings: Settings, furniture: str, container: str,
                                                          size: str) -> None:
    chunks = chunks_of(page(furniture, container, size), settings)

    leaked = [c.text for c in chunks if any(word in c.text or word in (c.context or "") for word in LEAKS)]
    assert not leaked
    paths = [c.locator["heading_path"] for c in chunks]
    if size == "small":
        assert paths == [["Release notes", "Sync"]]
        assert chunks[0].text == SENTENCE.format(n=0)
    else:
        assert paths[0] == ["Release notes"]
        assert {tuple(p) for p in paths[1:]} == {("Release notes", "Sync"), ("Release notes", "Export")}
        text = "\n".join(c.text for c in chunks)
        assert all(SENTENCE.format(n=n) in text for n in range(12))
        assert "Exports now include attachments." in text


def test_the_issue_page_is_one_chunk_under_its_heading(settings: Settings) -> None:
    chunks = chunks_of(b"<nav>Home | About</nav><h1>Release notes</h1><p>Version 7.3 adds ...</p>", settings)

    assert [(c.text, c.locator["heading_path"]) for c in chunks] == [("Version 7.3 adds ...", ["Release notes"])]


def test_a_page_title_in_the_page_header_heads_the_path(settings: Settings) -> None:
    data = (b"<body><header><h1>Release notes</h1><nav><a href='/'>Zebrafish portal</a></nav>"
            b"<p class='tagline'>Quokka careers</p></header><p>Version 7.3 adds offline sync.</p>"
            b"<footer>All rights reserved</footer></body>")
    chunks = chunks_of(data, settings)

    assert [(c.text, c.locator["heading_path"]) for c in chunks] == [("Version 7.3 adds offline sync.",
                                                                      ["Release notes"])]


def test_an_articles_own_header_and_footer_are_content(settings: Settings) -> None:
    data = (b"<body><header><a href='/'>Zebrafish portal</a></header><article><header><h1>Release notes</h1>"
            b"<p>Published by the sync team on 3 May.</p></header><p>Version 7.3 adds offline sync.</p>"
            b"<footer><p>Filed under sync and offline use, reviewed by the platform group.</p></footer></article>"
            b"</body>")
    text = "\n".join(c.text for c in chunks_of(data, settings))

    assert "Published by the sync team on 3 May." in text and "Version 7.3 adds offline sync." in text
    assert "Zebrafish" not in text


def test_lists_tables_and_code_keep_their_shape(settings: Settings) -> None:
    data = (b"<body><main><h1>Setup</h1><p>Install the tools first.</p><ol><li>Download the installer.</li>"
            b"<li>Run it with <code>--quiet</code>.</li></ol><pre># not a heading\nsetup --quiet\n```</pre>"
            b"<p># not a heading either</p><table><tr><th>OS</th><th>Size</th></tr><tr><td>Linux</td><td>40 MB</td>"
            b"</tr></table></main></body>")
    extracted = extractor_for("text/html")(data, "setup.html", settings)

    assert "1. Download the installer.\n2. Run it with --quiet." in extracted.text
    assert "```\n# not a heading\nsetup --quiet\n\\```\n```" in extracted.text
    assert "\\# not a heading either" in extracted.text
    assert "| OS | Size |\n|---|---|\n| Linux | 40 MB |" in extracted.text
    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    assert {tuple(c.locator["heading_path"]) for c in chunks} == {("Setup",)}


def test_a_page_in_cuneiform_is_read_whole(settings: Settings) -> None:
    """The marks that trace blocks through trafilatura are cuneiform signs; a page written in them
    is read without marks (every block) rather than misread."""
    data = "<body><nav><a href='/'>Zebrafish portal</a></nav><h1>Tablet</h1><p>\U00012000\U00012001 reads a.</p>"
    chunks = chunks_of(data.encode(), settings)

    assert [(c.text, c.locator["heading_path"]) for c in chunks] == [("\U00012000\U00012001 reads a.", ["Tablet"])]


@pytest.mark.parametrize("container", ["none", "article"])
def test_trafilatura_still_chooses_the_main_content(settings: Settings, container: str) -> None:
    """Comments and related posts are not furniture by markup; the main-content choice leaves them out."""
    body = content("large") if container == "none" else f"<{container}>{content('large')}</{container}>"
    data = (f"<body>{body}<div id='comments' class='comments'><h3>2 comments</h3><p>Zebrafish says: great release, "
            f"thanks for the offline sync work!</p><p>Quokka says: does export include images too?</p></div>"
            f"<div class='related-posts'><h3>Related posts</h3><p>Zebrafish migration guide: moving notebooks "
            f"between workspaces without losing history.</p></div></body>").encode()
    chunks = chunks_of(data, settings)

    assert not [c.text for c in chunks if "Zebrafish" in c.text or "Quokka" in c.text]
    assert {tuple(c.locator["heading_path"]) for c in chunks} == {
        ("Release notes",), ("Release notes", "Sync"), ("Release notes", "Export")}


def test_a_page_past_the_size_for_choosing_main_content_is_read_whole(settings: Settings) -> None:
    """trafilatura's copies of a 47 MB page took 1.5 GB; a larger page keeps all but its furniture."""
    data = (f"<body><nav><a href='/'>Zebrafish portal</a></nav>{content('small')}<div class='comments'>"
            f"<p>Quokka says: great release!</p></div></body>").encode()
    whole = extractor_for("text/html")(data, "notes.html", settings.model_copy(update={
        "html_main_content_max_bytes": len(data) - 1}))
    chosen = extractor_for("text/html")(data, "notes.html", settings)

    assert (whole.metadata["content"], chosen.metadata["content"]) == ("body", "main")
    assert "Quokka says" in whole.text and "Quokka" not in chosen.text
    assert "Zebrafish" not in whole.text and "## Sync" in whole.text
