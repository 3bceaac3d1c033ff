"""PII redaction: numbers are redacted only when their own check passes; text around them is kept."""

from __future__ import annotations

import pytest

from mnemoflow.protect.pii import Redactor

R = Redactor("US")


@pytest.mark.parametrize(("text", "expected"), [
    ("card 5555 5555 5555 4444 on file", "card [CARD] on file"),
    ("amex 3782-822463-10005.", "amex [CARD]."),
    ("card 5555 5555 5555 4445 on file", "card 5555 5555 5555 4445 on file"),  # fails Luhn: not a card
    ("write to ops-team+alerts@corp.example.io today", "write to [EMAIL] today"),
    ("pay to GB33BUKB20201555555555 now", "pay to [IBAN] now"),
    ("pay to FR76 3000 6000 0112 3456 7890 189 QUICKLY", "pay to [IBAN] QUICKLY"),
    ("pay to FR76 3000 6000 0112 3456 7890 188", "pay to FR76 3000 6000 0112 3456 7890 188"),  # bad check digits
    ("ring (212) 555-0147 or +49 30 901820", "ring [PHONE] or [PHONE]"),
    ("ssn 536-90-4321, dni 12345678Z", "ssn [NATIONAL_ID], dni [NATIONAL_ID]"),
    ("met at 10:45 on 2025-02-17, room 4211, paid $1,250.00, v2.3.1", None),  # nothing to redact
])
def test_each_kind_is_replaced_by_its_placeholder(text: str, expected: str | None) -> None:
    assert R.text(text) == (expected if expected is not None else text)


def test_structured_values_keep_their_shape_and_keys() -> None:
    value = {"contact": ["x.y@mail.example", 42], "nested": {"iban": "NL91ABNA0417164300"}, "ok": True}
    assert R.value(value) == {"contact": ["[EMAIL]", 42], "nested": {"iban": "[IBAN]"}, "ok": True}
