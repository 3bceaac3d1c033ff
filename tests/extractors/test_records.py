"""Records: one unit per CSV row or JSON object, `key: value` lines, cited by record number."""

import json
from pathlib import Path

import pytest

import mnemoflow.extractors.records as records
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.extractors.records import looks_like_transcript
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "alex")
CSV = "text/csv"
JSON = "application/json"
JSONL = "application/x-ndjson"


def extract(mime: str, data: bytes, name: str, settings: Settings) -> Extracted:
    return extractor_for(mime)(data, name, settings)


def test_csv_rows_with_a_bom_quoted_commas_and_ragged_rows(settings: Settings) -> None:
    data = ('\ufeffid,Name,notes\r\n'
            '1,"Smith, John","prefers ""Johnny"", not John"\r\n'
            '\r\n'
            '2,Ana Lima,"two\nlines"\r\n'
            '3,Bo\r\n'
            '4,Cy,,extra\r\n').encode()
    extracted = extract(CSV, data, "people.csv", settings)

    assert [(u.text, u.locator, u.context) for u in extracted.units] == [
        ('id: 1\nName: Smith, John\nnotes: prefers "Johnny", not John',
         {"record": 1, "line": 2, "columns": ["id", "Name", "notes"]}, "people.csv > Smith, John"),
        ("id: 2\nName: Ana Lima\nnotes: two\nlines",
         {"record": 2, "line": 4, "columns": ["id", "Name", "notes"]}, "people.csv > Ana Lima"),
        ("id: 3\nName: Bo", {"record": 3, "line": 6, "columns": ["id", "Name", "notes"]}, "people.csv > Bo"),
        ("id: 4\nName: Cy\ncolumn_4: extra", {"record": 4, "line": 7, "columns": ["id", "Name", "notes"]},
         "people.csv > Cy"),
    ]
    assert extracted.layout == "units"
    assert extracted.metadata == {"records": 4, "columns": ["id", "Name", "notes"], "ragged_rows": 2}


def test_semicolon_csv_is_sniffed(settings: Settings) -> None:
    data = b"office;city;manager\nHQ;Paris;Claire Dubois\nR&D;Berlin;Jonas Weber\n"
    extracted = extract(CSV, data, "offices.csv", settings)

    assert [u.text for u in extracted.units] == [
        "office: HQ\ncity: Paris\nmanager: Claire Dubois", "office: R&D\ncity: Berlin\nmanager: Jonas Weber"]
    assert extracted.units[1].locator == {"record": 2, "line": 3, "columns": ["office", "city", "manager"]}


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "empty file"),
    (b"id,name\n", "header row only"),
    (b"1,2,3\n4,5,6\n", "no header row"),
    ("id,name\n1,caf\xe9\n".encode("latin-1"), "not UTF-8"),
])
def test_unreadable_csv_is_refused_with_a_reason(settings: Settings, data: bytes, reason: str) -> None:
    with pytest.raises(BadInputError, match=reason):
        extract(CSV, data, "bad.csv", settings)


def test_json_list_envelope_and_single_object(settings: Settings) -> None:
    listed = [{"id": 7, "title": "Renew TLS certificate", "owner": {"name": "Ana", "team": "platform"},
               "labels": ["ops", "urgent"], "done": False, "notes": None,
               "steps": [{"cmd": "certbot renew"}, {"cmd": "systemctl reload nginx"}]},
              {}, {"id": 9, "subject": "Rotate keys"}]
    extracted = extract(JSON, json.dumps(listed).encode(), "tasks.json", settings)
    assert [(u.text, u.locator, u.context) for u in extracted.units] == [
        ("id: 7\ntitle: Renew TLS certificate\nowner.name: Ana\nowner.team: platform\nlabels: ops, urgent\n"
         "done: false\nsteps[0].cmd: certbot renew\nsteps[1].cmd: systemctl reload nginx",
         {"record": 1, "path": "$[0]"}, "tasks.json > Renew TLS certificate"),
        ("id: 9\nsubject: Rotate keys", {"record": 3, "path": "$[2]"}, "tasks.json > Rotate keys"),
    ]

    envelope = {"page": 1, "items": [{"sku": "A-1", "name": "Kettle"}, {"sku": "B-2", "name": "Toaster"}]}
    extracted = extract(JSON, json.dumps(envelope).encode(), "catalog.json", settings)
    assert [(u.text, u.locator) for u in extracted.units] == [
        ("sku: A-1\nname: Kettle", {"record": 1, "path": "$.items[0]"}),
        ("sku: B-2\nname: Toaster", {"record": 2, "path": "$.items[1]"}),
    ]
    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    assert [(c.text, c.locator, c.context) for c in chunks] == [
        ("sku: A-1\nname: Kettle", {"record": 1, "path": "$.items[0]"}, "catalog.json > Kettle"),
        ("sku: B-2\nname: Toaster", {"record": 2, "path": "$.items[1]"}, "catalog.json > Toaster"),
    ]

    single = {"host": "db-1", "config": {"port": 5432, "replicas": [{"zone": "a"}]}}
    extracted = extract(JSON, json.dumps(single).encode(), "host.json", settings)
    assert [(u.text, u.locator) for u in extracted.units] == [
        ("host: db-1\nconfig.port: 5432\nconfig.replicas[0].zone: a", {"record": 1, "path": "$"})]


@pytest.mark.parametrize(("data", "reason"), [
    (b'{"a": 1,}', "invalid JSON: .* at line 1 column 9"),
    (b'[{"a": 1}, "b"]', r"\$\[1\] is a string, not an object"),
    (b"42", "holds a number, not records"),
    (b"[{}]", "every record is empty"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
])
def test_unreadable_json_is_refused_with_a_reason(settings: Settings, data: bytes, reason: str) -> None:
    with pytest.raises(BadInputError, match=reason):
        extract(JSON, data, "bad.json", settings)


def test_jsonl_keeps_the_good_lines_and_counts_the_bad(settings: Settings) -> None:
    data = b'{"id": 1, "name": "alpha"}\n{"id": 2, "name": \n\n[1, 2]\n{"id": 3, "tags": ["x", "y"]}\n'
    extracted = extract(JSONL, data, "events.jsonl", settings)

    assert [(u.text, u.locator, u.context) for u in extracted.units] == [
        ("id: 1\nname: alpha", {"record": 1, "line": 1}, "events.jsonl > alpha"),
        ("id: 3\ntags: x, y", {"record": 2, "line": 5}, "events.jsonl"),
    ]
    assert extracted.metadata == {"records": 2, "invalid_lines": 2, "first_invalid_line": 2}

    with pytest.raises(BadInputError, match=r"no line is a JSON object \(line 2 is the first bad one\)"):
        extract(JSONL, b"\nnot json\n[]\n", "broken.jsonl", settings)


def test_record_cap(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "MAX_RECORDS", 2)
    rows = b"n\n1\n2\n3\n"
    with pytest.raises(BadInputError, match="more than 2 records"):
        extract(CSV, rows, "many.csv", settings)
    with pytest.raises(BadInputError, match="more than 2 records"):
        extract(JSONL, b'{"n": 1}\n{"n": 2}\n{"n": 3}\n', "many.jsonl", settings)
    with pytest.raises(BadInputError, match="more than 2 records"):
        extract(JSON, b'[{"n": 1}, {"n": 2}, {"n": 3}]', "many.json", settings)
    assert len(extract(CSV, b"n\n1\n2\n", "two.csv", settings).units) == 2


@pytest.mark.parametrize(("name", "data", "transcript"), [
    ("chat.jsonl", b'{"session_id": "s1", "turn_id": "1", "speaker": "Ana", "text": "hi"}\n', True),
    ("chat.json", b'[{"session_id": "s1", "turn_id": "1"}, {"session_id": "s1", "turn_id": "2"}]', True),
    ("chat.jsonl", b'not json\n{"session_id": "s1", "turn_id": "1"}\n', True),  # first parsable record decides
    ("events.jsonl", b'{"event": "login", "session_id": "s1"}\n', False),  # session_id alone is not a turn
    ("chat.jsonl", b'{"turn_id": "1", "speaker": "Ana", "text": "hi"}\n', True),  # no sessions: the file is one
    ("scores.jsonl", b'{"turn_id": "1", "score": 3}\n', False),  # a turn_id alone is not a turn either
    ("tasks.json", b'[{"id": 1, "title": "x"}]', False),
    ("catalog.json", b'{"items": [{"sku": "A-1"}]}', False),
    ("broken.json", b'[{"session_id": "s1", "turn_id": "1"},', True),  # unparsable: the transcript parser reports it
    ("broken.jsonl", b"nothing\nparses\n", True),
    ("latin1.jsonl", b'{"text": "caf\xe9"}\n', True),
    ("empty.jsonl", b"", True),
])
def test_looks_like_transcript(name: str, data: bytes, transcript: bool) -> None:
    assert looks_like_transcript(data, name) is transcript


def test_recall_cites_the_csv_record(service: MemoryService, tmp_path: Path) -> None:
    table = tmp_path / "suppliers.csv"
    table.write_text(
        "supplier;country;contact;terms\n"
        "Nordic Timber AB;Sweden;Lena Berg;net 30 days, pallets returned monthly\n"
        "Atlas Steel;Morocco;Youssef Amrani;net 60 days, letter of credit required\n"
        "Kyoto Ceramics;Japan;Aiko Tanaka;prepayment, shipped by sea from Osaka\n"
    )
    outcome = service.ingest(SCOPE, [table])

    assert outcome.report.errors == []
    hit = service.recall(SCOPE, "which supplier needs a letter of credit?", k=3).items[0]
    assert "Atlas Steel" in hit.text
    assert hit.citations[0].locator == {"record": 2, "line": 3, "columns": ["supplier", "country", "contact", "terms"]}


def test_a_wide_csv_keeps_its_header_in_the_document_and_a_matrix_is_refused(settings: Settings) -> None:
    wide = records.LOCATOR_COLUMNS + 1
    data = (",".join(f"c{n}" for n in range(wide)) + "\n" + ",".join(str(n) for n in range(wide)) + "\n").encode()
    extracted = extract(CSV, data, "wide.csv", settings)
    assert extracted.units[0].locator == {"record": 1, "line": 2}  # not 101 names in every chunk of every row
    assert len(extracted.metadata["columns"]) == wide

    matrix = ",".join(["x"] * (records.MAX_COLUMNS + 1)).encode() + b"\n1\n"
    with pytest.raises(BadInputError, match=f"header row has {records.MAX_COLUMNS + 1} columns, over the limit"):
        extract(CSV, matrix, "matrix.csv", settings)
    wide_row = b"a,b\n" + ",".join(["1"] * (records.MAX_COLUMNS + 1)).encode() + b"\n"
    with pytest.raises(BadInputError, match="line 2: .* columns, over the limit"):
        extract(CSV, wide_row, "ragged.csv", settings)


def test_json_past_the_record_cap_is_refused_while_it_is_read(settings: Settings,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before the parser holds every record: 3.4 million tiny records took 1.5 GB as objects."""
    monkeypatch.setattr(records, "MAX_RECORDS", 5)
    six = [{"n": n} for n in range(6)]
    for document in (six, {"meta": {"page": 1}, "data": six}):
        with pytest.raises(BadInputError, match="more than 5 records in one array"):
            extract(JSON, json.dumps(document).encode(), "many.json", settings)
    assert len(extract(JSON, json.dumps(six[:5]).encode(), "five.json", settings).units) == 5
    # what is past the cap is not read: a broken tail is not what refuses it
    with pytest.raises(BadInputError, match="more than 5 records"):
        extract(JSON, json.dumps(six)[:-1].encode() + b", oops", "tail.json", settings)


@pytest.mark.parametrize("text", ['[{"a": 1}] x', '[1,]', '{"a" 1}', '{"a": 1,}', '[1 2]', '{"a": [1, {"b": 2}]}x'])
def test_json_errors_read_as_before(settings: Settings, text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(BadInputError, match=f"invalid JSON: {expected.value.msg} at line 1 column {expected.value.colno}"):
        extract(JSON, text.encode(), "bad.json", settings)


def test_a_json_transcript_is_told_by_its_first_turn_alone() -> None:
    turn = {"session_id": "s", "turn_id": "1", "speaker": "Ada", "ts": "2024-06-11T09:00:00Z", "text": "hi"}
    assert looks_like_transcript(("[" + json.dumps(turn) + ", " + "{" * 100_000).encode(), "chat.json")
    assert not looks_like_transcript(b'[{"name": "not a turn"}, ' + b"{" * 100_000, "rows.json")
