"""Page furniture: what a site repeats around a page's content (navigation, banners, footers, cookie
notices, menus), found by its markup and removed before the content is chosen.

trafilatura's main extractor drops most of it, but not on every page: on a short page it falls back
to a baseline that reads the whole body, navigation included, and it keeps some banners. Removing
furniture first means no path through it can bring navigation back, whatever the page's size.

Two tiers. What the markup declares (`<nav>`, `role="navigation"`, the page's own `<header>` and
`<footer>`, `<aside>`, cookie and consent banners) always goes. What only looks like navigation
(a block whose text is all links, such as a menu given as a list of links) goes unless it is all
the page has: a page that is a list of links keeps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree
from lxml.html import HtmlElement

# Never content: scripts, form controls (a language picker's options), embedded objects, menus.
_DROPPED_TAGS = ("script", "style", "noscript", "template", "nav", "menu", "aside", "button", "input", "select",
                 "textarea", "datalist", "iframe", "frame", "object", "embed", "svg", "canvas", "dialog")
_FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "menu", "menubar", "toolbar",
                              "complementary", "dialog", "alertdialog"})
# A <header> or <footer> belongs to the page (is its banner or footer) unless one of these holds it.
_SECTIONING = ("article", "aside", "nav", "section", "main")
_SECTIONING_ROLES = frozenset({"main", "article", "region"})
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BANNER_HINT = re.compile(r"cookie|consent|gdpr|ccpa|onetrust|cookiebot|didomi", re.IGNORECASE)
BANNER_MAX_WORD_CHARS = 2000  # a cookie notice is a few sentences; a longer block is the page
# id or class words that name navigation; such a block goes once links make half its text
_NAVIGATION_HINT = re.compile(r"(?:^|[-_\s])(?:nav|navbar|navigation|menu|menubar|breadcrumbs?|crumbs|sidebar|"
                              r"skip|pagination|pager|toc|header|footer|masthead|topbar)(?:$|[-_\s])", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")


@dataclass
class _Text:
    """Word characters (letters and digits) under an element: all, inside links, inside headings."""

    words: int = 0
    link_words: int = 0
    heading_words: int = 0
    links: int = 0


def _words(text: str | None) -> int:
    return len(_NON_WORD.sub("", text)) if text else 0


def _hint(element: HtmlElement, pattern: re.Pattern[str]) -> bool:
    names = " ".join(filter(None, (element.get("id"), element.get("class"), element.get("aria-label"))))
    return bool(names) and bool(pattern.search(names))


def _belongs_to_page(element: HtmlElement) -> bool:
    return not any(a.tag in _SECTIONING or (a.get("role") or "").lower() in _SECTIONING_ROLES
                   for a in element.iterancestors())


def _drop(element: HtmlElement) -> None:
    """Remove an element and what it holds; the text after it stays where it was."""
    if element.getparent() is not None:
        element.drop_tree()


def _page_header(header: HtmlElement, body: HtmlElement) -> None:
    """The page's banner goes, but a heading in it stays when the content has no <h1> of its own:
    a simple page puts its title there, and the heading path starts from it."""
    outside_h1 = any(not any(a is header for a in h.iterancestors()) for h in body.iter("h1"))
    if not outside_h1:
        for heading in header.iter(*_HEADINGS):
            heading.tail = None
            header.addprevious(heading)  # moves it (and its subtree) out of the header
            break  # the first heading: a banner's later ones are its site name's taglines
    _drop(header)


def _is_banner(element: HtmlElement) -> bool:
    """Short, and no page title or article in it: a wrapper whose class says a banner was
    accepted ("cookies-accepted") holds the page, not the banner."""
    return (_words(element.text_content()) <= BANNER_MAX_WORD_CHARS
            and next(element.iter("h1", "main", "article"), None) is None)


def _declared_furniture(body: HtmlElement) -> None:
    for element in list(body.iter(*_DROPPED_TAGS)):
        _drop(element)
    for element in list(body.iter(etree.Element)):
        if (element.get("role") or "").lower() in _FURNITURE_ROLES:
            _drop(element)
    for footer in [f for f in body.iter("footer") if _belongs_to_page(f)]:
        _drop(footer)
    for header in [h for h in body.iter("header") if _belongs_to_page(h)]:
        _page_header(header, body)
    for element in list(body.iter(etree.Element)):
        if element is not body and _hint(element, _BANNER_HINT) and _is_banner(element):
            _drop(element)


def _measure(body: HtmlElement) -> dict[HtmlElement, _Text]:
    """Every element's word counts in one pass, children before parents (reversed document order)."""
    counts: dict[HtmlElement, _Text] = {}
    for element in reversed(list(body.iter(etree.Element))):
        own = _Text(words=_words(element.text))
        for child in element.iterchildren(etree.Element):
            inner = counts[child]
            tail = _words(child.tail)
            own.words += inner.words + tail
            own.link_words += inner.link_words
            own.heading_words += inner.heading_words
            own.links += inner.links
        if element.tag == "a" and element.get("href") is not None:
            own.link_words, own.links = own.words, own.links + 1
        elif element.tag in _HEADINGS:
            own.heading_words = own.words
        counts[element] = own
    return counts


def _named_navigation(element: HtmlElement, text: _Text) -> bool:
    """Named as navigation by its id, class or label, and links make half its text."""
    return bool(text.links) and text.link_words >= 0.5 * text.words and _hint(element, _NAVIGATION_HINT)


def _links_only(text: _Text) -> bool:
    """Links and separators only ("Home | About"): a menu, or a page's list of links."""
    return text.links >= 2 and text.link_words >= 0.9 * text.words


def _link_blocks(body: HtmlElement) -> None:
    """Blocks of links go: those named as navigation always, others unless the page has no other
    text (measured in words that are neither links nor headings, so that a stray "Skip to content"
    beside an index or a site map does not count)."""
    counts = _measure(body)
    named: list[HtmlElement] = []
    unnamed: list[HtmlElement] = []
    covered: set[HtmlElement] = set()
    for element in body.iter(etree.Element):  # document order: an outer block before what it holds
        if element.getparent() in covered:
            covered.add(element)
            continue
        text = counts[element]
        if element is body or text.heading_words or not text.words:
            continue  # a block with a heading is a section (a list of posts, say), not navigation
        if _named_navigation(element, text):
            named.append(element)
        elif _links_only(text):
            unnamed.append(element)
        else:
            continue
        covered.add(element)
    total = counts[body]
    left = total.words - total.link_words - total.heading_words - sum(
        counts[e].words - counts[e].link_words for e in named + unnamed)
    for element in named + (unnamed if left > 0 else []):
        _drop(element)


def remove_furniture(tree: HtmlElement) -> None:
    """Remove, in place, what the page's body holds besides its content."""
    body = tree.find("body")
    if body is None:
        return
    _declared_furniture(body)
    _link_blocks(body)
