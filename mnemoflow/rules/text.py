"""Reading a rule memory's words into rule slots, for the forms the rule engine writes (and people say):

    "Alex's rule: always answer in JSON when Alex asks for data"  -> if topic=data, then output.format=json
    "never use the shell tool unless Alex asks for a deploy"       -> then tool.deny=shell, except topic=deploy
    "only use calendar and email tools for scheduling"            -> if topic=scheduling, then tool.allow=calendar,email

A rule is read only when both its condition (none: it always applies) and its action are read;
anything else is left as a memory, and the reason is kept. The keys it writes: `topic` (what the
request is about), `channel` (where the person is: "on mobile"); `output.format`, `output.language`,
`output.length`, `output.citations`, `output.units`, and the tool keys.
"""

from __future__ import annotations

import re

from mnemoflow.errors import BadInputError
from mnemoflow.rules.model import RuleSpec

_OWNER = re.compile(r"^[\w .'-]{1,60}?'s? rule:\s*", re.I)
_SUBJECT = re.compile(r"^(?:please\s+)?(?:(?:the assistant|you|we)\s+)?(?:(?:must|should|need to|needs to|has to|have "
                      r"to|will)\s+)?(?:please\s+)?", re.I)
_EXCEPT = re.compile(r"[,;]?\s+\b(?:unless|except (?:when|if|for))\s+(?P<clause>.+)$", re.I)
_LEADING_IF = re.compile(r"^(?:when|whenever|if)\s+(?P<clause>[^,]+),\s*(?P<rest>.+)$", re.I)
_TRAILING_IF = re.compile(r"\s+\b(?:when|whenever|if)\s+(?P<clause>.+)$", re.I)
_TRAILING_FOR = re.compile(r"\s+\bfor\s+(?P<what>[a-z][\w -]{0,40}?)(?:\s+(?:requests?|questions?|tasks?|work))?$",
                           re.I)

_THING = r"(?:(?:a|an|the|my|your|our|his|her|their|some|any|[A-Z][\w-]*'s)\s+)?(?P<thing>[\w][\w -]{0,40}?)"
_ASKS = re.compile(rf"^\S+(?:\s+\S+)?\s+(?:asks?|requests?|wants?|needs?)\s+(?:for|about)\s+{_THING}$", re.I)
_ASKS_DIRECTLY = re.compile(rf"^\S+(?:\s+\S+)?\s+(?:asks?|requests?|wants?|needs?)\s+{_THING}$", re.I)
_IS_ON = re.compile(r"^\S+(?:\s+\S+)?\s+(?:is|am|are|'m|'s)\s+on\s+(?:(?:a|an|the|my|his|her|their)\s+)?"
                    r"(?P<thing>[\w-]+(?: [\w-]+)?)$", re.I)

_FORMATS = {"json": "json", "yaml": "yaml", "markdown": "markdown", "csv": "csv", "xml": "xml", "html": "html",
            "plain text": "text", "a table": "table", "tables": "table", "bullet points": "bullets",
            "bullets": "bullets", "a list": "list"}
_ANSWER = r"(?:always\s+)?(?:answer|reply|respond|write|format (?:answers|replies|responses|it|output)|output|give " \
          r"(?:answers|replies|data|results)|return (?:data|results|answers))"
_FORMAT = re.compile(rf"^{_ANSWER}(?:\s+\w+){{0,3}}?\s+(?:in|as|with)\s+(?P<what>{'|'.join(_FORMATS)})"
                     r"(?:\s+format)?$", re.I)
_LANGUAGE = re.compile(rf"^(?:{_ANSWER}|speak|talk)(?:\s+to \w+)?\s+in\s+(?P<language>[a-z]+)$", re.I)
_TOOL = r"(?:the\s+)?(?P<tool>[\w.:/-]+?)(?:\s+(?:tool|command|api))?s?"


def _tool_list(group: str) -> str:
    """One tool name or several ("calendar, email and maps"), optionally followed by "tool(s)"."""
    return (rf"(?:the\s+)?(?P<{group}>[\w.:/-]+(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)[\w.:/-]+)*)"
            r"(?:\s+tools?)?")


_DENY = re.compile(rf"^(?:never|don't|do not|must not|should not|shouldn't|mustn't)\s+(?:ever\s+)?(?:use|call|run|invoke|"
                   rf"touch)\s+{_tool_list('tools')}(?:\s+commands?)?$", re.I)
_ALLOW = re.compile(rf"^(?:only|just)\s+(?:use|call)\s+{_tool_list('tools')}$|^(?:use|call)\s+only\s+{_tool_list('t2')}$",
                    re.I)
_PREFER = re.compile(rf"^(?:always\s+)?(?:prefer|try)\s+{_TOOL}(?:\s+(?:over|to|before)\s+(?P<after>[\w.:/-]+)"
                     rf"(?:\s+tool)?)?(?:\s+first)?$|^(?:always\s+)?(?:use|call)\s+(?:the\s+)?(?P<first>[\w.:/-]+)\s+"
                     rf"(?:tool\s+)?first$|^(?:always\s+)?(?:use|call)\s+the\s+(?P<named>[\w.:/-]+)\s+tool$", re.I)
_CITE = re.compile(r"^(?:always\s+)?(?:cite|give|include|name)\s+(?:\S+\s+){0,2}sources?$", re.I)
_SHORT = re.compile(r"^(?:always\s+)?(?:keep|make)\s+(?:\S+\s+)?(?:answers?|replies|responses)\s+(?:short|brief|concise)"
                    r"$|^(?:always\s+)?be\s+(?:brief|concise|short)$", re.I)
_UNITS = re.compile(r"^(?:always\s+)?(?:use|answer in|give \S+ in)\s+(?P<system>metric|imperial)(?:\s+units)?$", re.I)


def _condition(clause: str) -> dict[str, str] | None:
    clause = clause.strip().rstrip(".!")
    if found := _ASKS.match(clause) or _ASKS_DIRECTLY.match(clause):
        return {"topic": found["thing"].strip().lower()}
    if found := _IS_ON.match(clause):
        return {"channel": found["thing"].strip().lower()}
    return None


def _names(text: str) -> list[str]:
    return [n for n in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", text.strip()) if n]


def _action(text: str) -> dict[str, str] | None:
    text = _SUBJECT.sub("", text.strip().rstrip(".!")).strip()
    if found := _FORMAT.match(text):
        return {"output.format": _FORMATS[found["what"].lower()]}
    if (found := _LANGUAGE.match(text)) and found["language"][0].isupper():  # a language is a proper name
        return {"output.language": found["language"].lower()}
    if found := _DENY.match(text):
        return {"tool.deny": ",".join(n.lower() for n in _names(found["tools"]))}
    if found := _ALLOW.match(text):
        return {"tool.allow": ",".join(n.lower() for n in _names(found["tools"] or found["t2"]))}
    if found := _PREFER.match(text):
        first = found["tool"] or found["first"] or found["named"]
        return {"tool.prefer": ",".join(n.lower() for n in [first, found["after"]] if n)}
    if _CITE.match(text):
        return {"output.citations": "true"}
    if _SHORT.match(text):
        return {"output.length": "short"}
    if found := _UNITS.match(text):
        return {"output.units": found["system"].lower()}
    return None


def read_rule(content: str) -> tuple[RuleSpec | None, str]:
    """The rule slots `content` says, or None; and what was read (or why nothing was)."""
    text = _OWNER.sub("", content.strip())
    exceptions: list[dict[str, str]] = []
    if found := _EXCEPT.search(text):
        exception = _condition(found["clause"])
        if exception is None:
            return None, f"exception not read: {found['clause']!r}"
        exceptions.append(exception)
        text = text[:found.start()]
    condition: dict[str, str] = {}
    if found := _LEADING_IF.match(text) or _TRAILING_IF.search(text):
        read = _condition(found["clause"])
        if read is None:
            return None, f"condition not read: {found['clause']!r}"
        condition = read
        text = found["rest"] if "rest" in found.groupdict() else text[:found.start()]
    elif found := _TRAILING_FOR.search(text):
        if _action(text[:found.start()]) is not None:
            condition, text = {"topic": found["what"].strip().lower()}, text[:found.start()]
    action = _action(text)
    if action is None:
        return None, f"action not read: {text!r}"
    try:
        spec = RuleSpec.of(condition, action, exceptions)
    except BadInputError as exc:
        return None, f"not a rule: {exc}"
    return spec, "read by the rule reader"


def read_slots(slots: dict[str, list[str]]) -> tuple[RuleSpec | None, str]:
    """Slots an LLM wrote (`if`, `then`, `unless`: lists of "key=value"), checked; None with the reason
    when they do not make a rule."""
    try:
        then = [s for s in slots.get("then") or [] if s.strip()]
        if not then:
            return None, "the model gave no action"
        return RuleSpec.from_pairs(slots.get("if") or [], then, slots.get("unless") or []), "read by the model"
    except BadInputError as exc:
        return None, f"the model's slots are not a rule: {exc}"
