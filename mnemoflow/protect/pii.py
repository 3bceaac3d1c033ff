"""PII redaction: card numbers, email addresses, phone numbers, IBANs and national id numbers become
typed placeholders ([CARD], [EMAIL], [PHONE], [IBAN], [NATIONAL_ID]) before anything is stored,
embedded, logged or queued.

A shape is only a candidate; what decides is the number's own check: Luhn for cards, the IBAN's
mod-97 check digits, each national number's checksum or structure (python-stdnum), and Google's
numbering plans for phone numbers (phonenumbers, which finds them in running text). Both are
pure-Python data libraries: nothing to download at run time. Presidio was the alternative: its
analyzer needs a spaCy model (en_core_web_lg, not on PyPI, fetched on first use) and its URL
recognizer fetches the public suffix list; its card, IBAN and phone recognisers are these same
checks (it calls phonenumbers itself).

Order matters: emails first (they hold digits), then IBANs (long runs of digits a card pattern
could take), cards, national ids, and phone numbers last, each pass reading what the one before
left; a placeholder holds no digit, so no later pass takes a piece of one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

import phonenumbers
from stdnum import iban, luhn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.dk import cpr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.se import personnummer
from stdnum.us import ssn

if TYPE_CHECKING:
    from mnemoflow.config import Settings
    from mnemoflow.storage.scope import Scope

CARD, EMAIL, PHONE, IBAN, NATIONAL_ID = "[CARD]", "[EMAIL]", "[PHONE]", "[IBAN]", "[NATIONAL_ID]"

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])")
# an IBAN as printed (groups of four) or compact; the end is found by its check digits (see _ibans)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")
_CARD = re.compile(r"(?<![\w.,-])\d(?:[ -]?\d){12,18}(?![\d-]|[.,]\d)")
# shapes of national numbers that carry a check: US SSN, Spanish DNI/NIE, Italian codice fiscale, French
# NIR, Indian Aadhaar, Swedish personnummer / Danish CPR, Canadian SIN, Brazilian CPF
_NATIONAL: tuple[tuple[re.Pattern[str], tuple[Callable[[str], bool], ...]], ...] = (
    (re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])"), (ssn.is_valid,)),
    (re.compile(r"(?<![\w-])\d{8}-?[A-Za-z](?![\w-])"), (dni.is_valid,)),
    (re.compile(r"(?<![\w-])[XYZxyz]-?\d{7}-?[A-Za-z](?![\w-])"), (nie.is_valid,)),
    (re.compile(r"(?<![\w-])[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z](?![\w-])"), (codicefiscale.is_valid,)),
    (re.compile(r"(?<![\w-])[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w-])"), (nir.is_valid,)),
    (re.compile(r"(?<![\w-])[2-9]\d{3} ?\d{4} ?\d{4}(?![\w-])"), (aadhaar.is_valid,)),
    (re.compile(r"(?<![\w-])\d{6}[-+]\d{4}(?![\w-])"), (personnummer.is_valid, cpr.is_valid)),
    (re.compile(r"(?<![\w-])\d{3}[- ]\d{3}[- ]\d{3}(?![\w-])"), (sin.is_valid,)),
    (re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])"), (cpf.is_valid,)),
)


@dataclass(frozen=True)
class Finding:
    kind: str  # the placeholder
    start: int
    end: int


def _emails(text: str) -> list[Finding]:
    return [Finding(EMAIL, m.start(), m.end()) for m in _EMAIL.finditer(text)]


def _ibans(text: str) -> list[Finding]:
    """The longest prefix of each candidate that passes the IBAN check (a candidate may run into the
    capitals after it: "DE89 3704 0044 0532 0130 00 ASAP")."""
    found = []
    for m in _IBAN.finditer(text):
        candidate = m.group()
        ends = [i for i in range(len(candidate), 14, -1) if i == len(candidate) or candidate[i] == " "]
        if end := next((i for i in ends if iban.is_valid(candidate[:i])), None):
            found.append(Finding(IBAN, m.start(), m.start() + end))
    return found


def _cards(text: str) -> list[Finding]:
    return [Finding(CARD, m.start(), m.end()) for m in _CARD.finditer(text) if luhn.is_valid(re.sub(r"\D", "", m.group()))]


def _national_ids(text: str) -> list[Finding]:
    found: list[Finding] = []
    for pattern, checks in _NATIONAL:
        for m in pattern.finditer(text):
            if any(check(m.group()) for check in checks) and not any(_overlaps(m, f) for f in found):
                found.append(Finding(NATIONAL_ID, m.start(), m.end()))
    return found


def _overlaps(match: re.Match[str], finding: Finding) -> bool:
    return match.start() < finding.end and finding.start < match.end()


def _phones(region: str) -> Callable[[str], list[Finding]]:
    def find(text: str) -> list[Finding]:
        if sum(c.isdigit() for c in text) < 7:  # no phone number is shorter; skip the matcher
            return []
        matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID)
        return [Finding(PHONE, m.start, m.end) for m in matcher]
    return find


def _apply(text: str, findings: list[Finding]) -> str:
    for finding in sorted(findings, key=lambda f: f.start, reverse=True):
        text = text[:finding.start] + finding.kind + text[finding.end:]
    return text


class Redactor:
    """Redacts text, and every string inside a JSON-like value (keys are left as they are)."""

    def __init__(self, phone_region: str = "US") -> None:
        self._passes = (_emails, _ibans, _cards, _national_ids, _phones(phone_region.upper()))

    def text(self, text: str) -> str:
        if not text or not any(c.isdigit() or c == "@" for c in text):
            return text  # every kind has a digit or an @: most text is left at once
        for find in self._passes:
            if findings := find(text):
                text = _apply(text, findings)
        return text

    def findings(self, text: str) -> list[str]:
        """The placeholders `text` would get, in order of the passes (for reports and tests)."""
        kinds = []
        for find in self._passes:
            found = find(text)
            kinds += [f.kind for f in found]
            text = _apply(text, found)
        return kinds

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value

    def dataclass(self, value: Any, *fields: str) -> Any:
        """A frozen dataclass with `fields` redacted."""
        return replace(value, **{name: self.value(getattr(value, name)) for name in fields})


@cache
def redactor(phone_region: str = "US") -> Redactor:
    return Redactor(phone_region)


def redactor_for(settings: Settings, tenant_id: str) -> Redactor | None:
    """The redactor of what `tenant_id` writes, or None when the tenant does not redact."""
    return redactor(settings.pii_phone_region) if settings.redacts(tenant_id) else None


def redaction(settings: Settings, scope: Scope) -> Callable[[Any], Any] | None:
    """What a landing step calls on each value it lands (`Redactor.value`), or None when the scope's
    tenant does not redact."""
    found = redactor_for(settings, scope.tenant_id)
    return None if found is None else found.value
