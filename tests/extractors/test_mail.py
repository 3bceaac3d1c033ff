"""E-mail: a header block above the body, HTML flattened, attachments become documents of their own."""

from email.message import EmailMessage
from pathlib import Path

import pymupdf
import pytest

import mnemoflow.extractors.mail  # noqa: F401  (registers message/rfc822)
import mnemoflow.extractors.pdf  # noqa: F401  (an attached PDF is read by its own extractor)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "alex")


def mail(subject: str = "Staging database moved", body: str | None = None, html: str | None = None) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Dana Reyes <dana@example.com>"
    message["To"] = "ops@example.com, Sam Okafor <sam@example.com>"
    message["Cc"] = "lead@example.com"
    message["Date"] = "Tue, 02 Jan 2024 10:15:00 +0100"
    message["Message-ID"] = "<staging-42@example.com>"
    message["Subject"] = subject
    if body is not None:
        message.set_content(body)
    if html is not None:
        if body is None:
            message.set_content(html, subtype="html")
        else:
            message.add_alternative(html, subtype="html")
    return message


def budget_pdf() -> bytes:
    doc = pymupdf.open()
    for text in ("Budget summary: travel spending stays flat.",
                 "The hardware budget for the Lisbon office is 48,000 euros, approved by finance."):
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 400), text, fontsize=11)
    return doc.tobytes()


def extract(data: bytes, settings: Settings, name: str = "mail.eml") -> Extracted:
    return extractor_for("message/rfc822")(data, name, settings)


def test_plain_body_under_a_header_block_with_metadata(settings: Settings) -> None:
    body = "Hi all,\n\nThe staging database moved to eu-west-1 this morning.\n\nDana"
    extracted = extract(mail(body=body, html="<p>ignored when a plain body exists</p>").as_bytes(), settings)
    assert extracted.title == "Staging database moved" and extracted.layout == "plain"
    assert extracted.text == (
        "From: Dana Reyes <dana@example.com>\nTo: ops@example.com, Sam Okafor <sam@example.com>\n"
        "Cc: lead@example.com\nSent: Tue, 02 Jan 2024 10:15:00 +0100\nSubject: Staging database moved\n\n" + body
    )
    assert extracted.metadata == {
        "from": "Dana Reyes <dana@example.com>", "to": "ops@example.com, Sam Okafor <sam@example.com>",
        "cc": "lead@example.com", "date": "2024-01-02T10:15:00+01:00", "message_id": "<staging-42@example.com>",
    }
    assert extracted.attachments == []
    first = chunk_extracted("doc", extracted, 256)[0]
    assert first.text.startswith("From: Dana Reyes") and "eu-west-1" in first.text


def test_an_html_only_body_is_flattened_to_paragraphs(settings: Settings) -> None:
    html = ("<html><head><title>x</title><style>p {color: red}</style></head><body>"
            "<div>Hi <b>team</b>,<br>quick   update:</div><p>The\n   standup moves to 9:30.</p>"
            "<table><tr><td>Room</td><td>Atlas</td></tr></table><script>track()</script></body></html>")
    extracted = extract(mail(html=html).as_bytes(), settings)
    body = extracted.text.split("\n\n", 1)[1]
    assert body == "Hi team,\nquick update:\n\nThe standup moves to 9:30.\n\nRoom Atlas"


def test_attachments_are_handed_back_with_their_bytes_and_type(settings: Settings) -> None:
    message = mail(body="Budget attached, and the raw export.")
    pdf = budget_pdf()
    message.add_attachment(pdf, maintype="application", subtype="pdf", filename="budget.pdf")
    message.add_attachment(b"a,b\n1,2\n", maintype="application", subtype="octet-stream",
                           filename="C:\\exports\\budget.pdf")
    message.add_attachment(b"\x89PNG", maintype="image", subtype="png", filename="logo.png", disposition="inline")
    forwarded = mail(subject="Old thread", body="The earlier discussion.")
    message.add_attachment(forwarded)
    extracted = extract(message.as_bytes(), settings)
    names = [(a.name, a.mime) for a in extracted.attachments]
    # an inline image is part of the body; a generic type is left to the file name; names stay unique
    assert names == [("budget.pdf", "application/pdf"), ("budget (2).pdf", None),
                     ("Old thread.eml", "message/rfc822")]
    assert extracted.attachments[0].data == pdf
    inner = extract(extracted.attachments[2].data, settings, name="Old thread.eml")
    assert inner.title == "Old thread" and inner.text.endswith("The earlier discussion.")


def test_a_mail_with_only_an_attachment_is_its_header_block(settings: Settings) -> None:
    message = mail(subject="Scan")
    message.add_attachment(budget_pdf(), maintype="application", subtype="pdf", filename="scan.pdf")
    extracted = extract(message.as_bytes(), settings)
    assert extracted.text.endswith("Subject: Scan") and extracted.text.startswith("From: Dana Reyes")
    assert [a.name for a in extracted.attachments] == ["scan.pdf"]


def test_headers_the_stdlib_parser_trips_over_are_kept_raw(settings: Settings) -> None:
    # CPython 3.11's address parser raises IndexError on this To header
    data = b"From: dana@example.com\nTo: :\t?@\nSubject: odd\n\nThe body survives.\n"
    extracted = extract(data, settings)
    assert extracted.metadata["to"] == ": ?@"
    assert extracted.text.endswith("The body survives.")


def test_an_unknown_charset_is_read_as_utf8(settings: Settings) -> None:
    data = ("From: a@example.com\nSubject: Caf\u00e9\nContent-Type: text/plain; charset=x-made-up\n"
            "Content-Transfer-Encoding: 8bit\n\nMeet at the caf\u00e9.\n").encode()
    assert extract(data, settings).text.endswith("Meet at the caf\u00e9.")


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "^empty file"),
    (b"%PDF-1.7\n%\xb5\xb6\n1 0 obj\n<<>>\nendobj\n", "^not an e-mail message"),
    (b"just some words\nand more words\n", "^not an e-mail message"),
])
def test_what_is_not_a_mail_is_refused(settings: Settings, data: bytes, reason: str) -> None:
    with pytest.raises(BadInputError, match=reason):
        extract(data, settings)


def test_recall_finds_the_sender_and_the_attached_pdf_page(service: MemoryService, tmp_path: Path) -> None:
    message = mail(subject="Lisbon office budget", body="Hi Sam,\n\nthe approved numbers are attached.\n\nDana")
    message.add_attachment(budget_pdf(), maintype="application", subtype="pdf", filename="budget.pdf")
    path = tmp_path / "budget.eml"
    path.write_bytes(message.as_bytes())
    outcome = service.ingest(SCOPE, [path])
    assert outcome.report.errors == [] and service.store.counts(SCOPE)["documents"] == 2

    hit = service.recall(SCOPE, "How large is the hardware budget for the Lisbon office?", k=3).items[0]
    assert "48,000 euros" in hit.text
    assert hit.citations[0].uri == path.resolve().as_uri() + "#attachment=budget.pdf"
    assert hit.citations[0].locator["page"] == 2

    sender = service.recall(SCOPE, "Who sent the mail about the Lisbon office budget?", k=3).items[0]
    assert sender.citations[0].uri == path.resolve().as_uri()
    assert "From: Dana Reyes <dana@example.com>" in sender.text
