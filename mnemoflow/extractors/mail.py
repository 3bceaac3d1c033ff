"""E-mail (.eml): a header block (From, To, Cc, Sent, Subject) above the body, so recall can answer
"who sent ...", and every attachment handed back to the registry as a document of its own.

The plain-text body is preferred; an HTML-only body is flattened to paragraphs with lxml. A
forwarded message (message/rfc822) is passed on whole, as an .eml attachment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from email import errors, policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

import lxml.html
from lxml import etree

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Attachment, Extracted, register, supported_mimes

MAIL_MIME = "message/rfc822"
_IDENTITY_HEADERS = ("from", "to", "subject", "date", "message-id")
# The date is labelled "Sent", as Outlook prints it: the word a "who sent ..." question uses, which
# decides BM25 when a mail's attachment is about the same subject (tests/extractors/test_mail.py).
_SHOWN_HEADERS = (("From", "from"), ("To", "to"), ("Cc", "cc"), ("Sent", "date"), ("Subject", "subject"))
# What CPython 3.11's header parser raises on some malformed address and message-id headers.
_PARSER_BUGS = (AttributeError, IndexError, TypeError, NameError, ValueError, errors.HeaderParseError)
_HTML_BLOCKS = ("p", "div", "li", "tr", "table", "blockquote", "pre", "ul", "ol", "hr", "section", "article",
                "h1", "h2", "h3", "h4", "h5", "h6")
_PARAGRAPH, _LINE = "\ue000", "\ue001"  # private-use marks for breaks that survive whitespace folding
_SPACES = re.compile(r"\s+")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")


def _parse(data: bytes) -> EmailMessage:
    if not data.strip():
        raise BadInputError("empty file: no mail")
    message = BytesParser(policy=policy.default).parsebytes(data)
    if not any(name in message for name in _IDENTITY_HEADERS):
        raise BadInputError("not an e-mail message: no From, To, Subject, Date or Message-ID header")
    return message


def _header(message: EmailMessage, name: str) -> str:
    """The decoded header, or its raw value where the stdlib's parser trips over a malformed one."""
    try:
        value = message.get(name)
    except _PARSER_BUGS:
        value = next((raw for key, raw in message.raw_items() if key.lower() == name), None)
    return " ".join(str(value).split()) if value is not None else ""


def _text(part: EmailMessage) -> str:
    try:
        content = part.get_content()
    except LookupError:  # an unknown charset label: UTF-8 is the likeliest guess
        content = (part.get_payload(decode=True) or b"").decode("utf-8", "replace")
    return content.replace("\r\n", "\n").strip()


def html_to_text(html: str) -> str:
    """Paragraphs from block elements, line breaks from <br>, every other run of whitespace one space."""
    html = _XML_DECLARATION.sub("", html)
    if not html.strip():
        return ""
    try:
        root = lxml.html.fromstring(html)
    except etree.ParserError:  # markup with no elements at all (a lone comment)
        return ""
    for element in root.xpath("//script | //style | //head"):
        element.drop_tree()
    for element in root.iter(*_HTML_BLOCKS):
        element.text = _PARAGRAPH + (element.text or "")
        element.tail = _PARAGRAPH + (element.tail or "")
    for element in root.iter("br"):
        element.tail = _LINE + (element.tail or "")
    for element in root.iter("td", "th"):
        element.tail = " " + (element.tail or "")
    flat = _SPACES.sub(" ", root.text_content()).replace(_LINE, "\n")
    paragraphs = ("\n".join(filter(None, map(str.strip, p.split("\n")))) for p in flat.split(_PARAGRAPH))
    return "\n\n".join(p for p in paragraphs if p)


def _body(message: EmailMessage) -> tuple[str, EmailMessage | None]:
    """The body text and the part it came from: text/plain, else text/html flattened."""
    plain = message.get_body(preferencelist=("plain",))
    if plain is not None and (text := _text(plain)):
        return text, plain
    html = message.get_body(preferencelist=("html",))
    if html is not None:
        return html_to_text(_text(html)), html
    return "", None


def _attachment_parts(part: EmailMessage, body: EmailMessage | None) -> Iterator[EmailMessage]:
    """Named parts that are not shown inline, and forwarded messages; not the parts inside those."""
    if part.get_content_type() == MAIL_MIME:
        yield part
    elif part.is_multipart():
        for child in part.iter_parts():
            yield from _attachment_parts(child, body)
    elif part is not body and part.get_content_disposition() != "inline" and part.get_filename():
        yield part


def _safe_name(name: str, taken: set[str]) -> str:
    """The file name without any directory, made unique within the mail (each becomes a document URI)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip() or "attachment"
    stem, dot, suffix = base.rpartition(".") if "." in base.lstrip(".") else (base, "", "")
    unique, n = base, 1
    while unique in taken:
        n += 1
        unique = f"{stem} ({n}){dot}{suffix}"
    taken.add(unique)
    return unique


def _attachments(message: EmailMessage, body: EmailMessage | None) -> list[Attachment]:
    """The declared type is kept where an extractor reads it; otherwise (application/octet-stream,
    say) ingest goes by the file name."""
    attachments, taken, known = [], set(), set(supported_mimes())
    for part in _attachment_parts(message, body):
        content_type = part.get_content_type()
        if content_type == MAIL_MIME:
            inner = part.get_payload(0)
            name = part.get_filename() or f"{_header(inner, 'subject') or 'forwarded message'}.eml"
            data = inner.as_bytes(policy=policy.compat32)  # as received: no refolding of its headers
        else:
            name, data = part.get_filename() or "", part.get_payload(decode=True) or b""
        mime = content_type if content_type in known else None
        attachments.append(Attachment(_safe_name(name, taken), data, mime))
    return attachments


def _metadata(message: EmailMessage) -> dict[str, str]:
    metadata = {key: value for key in ("from", "to", "cc") if (value := _header(message, key))}
    if date := _header(message, "date"):
        try:
            metadata["date"] = parsedate_to_datetime(date).isoformat()
        except (TypeError, ValueError):
            metadata["date"] = date
    if message_id := _header(message, "message-id"):
        metadata["message_id"] = message_id
    return metadata


@register(MAIL_MIME)
def extract_mail(data: bytes, name: str, settings: Settings) -> Extracted:
    try:
        message = _parse(data)
        body, body_part = _body(message)
        attachments = _attachments(message, body_part)
    except RecursionError:  # the stdlib parser and walkers recurse once per nested MIME part
        raise BadInputError("MIME parts nested too deeply to read") from None
    header_block = "\n".join(f"{label}: {value}" for label, key in _SHOWN_HEADERS if (value := _header(message, key)))
    return Extracted(
        mime=MAIL_MIME, title=_header(message, "subject") or name, layout="plain",
        text="\n\n".join(filter(None, (header_block, body))), attachments=attachments,
        metadata=_metadata(message),
    )
