#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<name>/) from the shipped pipelines and
data, plus a few hostile inputs per target. Seeds that were added by hand (reproducers of findings, named
crash-*, oom-*, timeout-*, or regress-*) are left alone. Run from anywhere: python3 tests/fuzz/make_corpus.py
"""
import gzip
import io
import json
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(REPO, *parts), "rb") as f:
        return f.read()


def lines(*parts, n=None, max_bytes=None):
    out = [l for l in read(*parts).split(b"\n") if l.strip()]
    if max_bytes:
        out = [l for l in out if len(l) <= max_bytes]
    return out[:n] if n else out


def shrink_record(rec, max_text=300):
    """A record with long texts cut, so that a seed stays a few KB."""
    def cut(v):
        if isinstance(v, str):
            return v[:max_text]
        if isinstance(v, list):
            return [cut(x) for x in v[:3]]
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v
    return cut(rec)


# ---- pipeline ------------------------------------------------------------------------------------------
def pipeline():
    for f in sorted(os.listdir(os.path.join(REPO, "pipelines"))):
        if f.endswith(".yaml"):
            put("pipeline", f, read("pipelines", f))
    put("pipeline", "minimal.yaml", "name: m\ndataset: {path: data.jsonl}\nnodes:\n  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}\nsinks:\n  - {uses: sink.jsonl, with: {file: out.jsonl}}\n")
    put("pipeline", "cycle.yaml", "name: c\ndataset: {path: d.csv}\nnodes:\n  - {id: a, uses: ksodi.s0, inputs: {answer: b.S0}}\n  - {id: b, uses: ksodi.s0, inputs: {answer: a.S0}}\n")
    put("pipeline", "hostile-deep-flow.yaml", "name: d\nnodes: " + "[" * 300 + "]" * 300 + "\n")
    put("pipeline", "hostile-deep-block.yaml", "name: d\nnodes:\n" + "".join("  " * i + "- \n" for i in range(60)))
    put("pipeline", "hostile-aliases.yaml",
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n"
        "name: x\ndataset: {path: d.csv}\nnodes:\n  - {id: s0, uses: ksodi.s0, with: {alpha_by_tool_profile: {x: *c}}}\n")
    put("pipeline", "hostile-types.yaml", "name: [1, 2]\ndataset: 7\nreplications: 1e999\nnodes: {id: x}\nsinks: null\noutput: {dir: [a]}\n")
    put("pipeline", "hostile-bytes.yaml", b"name: \xff\xfe\x00bad\nnodes:\n  - id: \"\\ud800\"\n    uses: ksodi.s0\n    with: {alpha: .nan, beta: -.inf, gamma: 0x10}\n")


# ---- jsonl ---------------------------------------------------------------------------------------------
def jsonl():
    std = [json.loads(l) for l in lines("pipelines", "data", "ksodi_standard_sample.jsonl", n=3)]
    put("jsonl", "ksodi-standard.jsonl", "\n".join(json.dumps(shrink_record(r), ensure_ascii=False) for r in std) + "\n")
    put("jsonl", "ksodi-standard-ascii.jsonl", "\r\n".join(json.dumps(shrink_record(r, 150)) for r in std[:2]))
    full = [json.loads(l) for l in lines("pipelines", "data", "ksodi_full_sample.jsonl", n=3)]
    put("jsonl", "ksodi-full.jsonl", "\n".join(json.dumps(shrink_record(r), ensure_ascii=False) for r in full) + "\n")
    put("jsonl", "chatbot.jsonl", read("pipelines", "chatbot", "data", "sample_expanded.jsonl"))
    sess = json.loads(lines("pipelines", "compression", "sessions.jsonl", n=1)[0])
    put("jsonl", "session.jsonl", json.dumps(shrink_record(sess, 120)) + "\n")
    put("jsonl", "bom-blank-lines.jsonl", b"\xef\xbb\xbf{\"a\": 1}\n\n   \n{\"a\": 2, \"b\": [1, 2.5e3, null, true]}\n")
    put("jsonl", "escapes.jsonl", '{"t": "\\u00e4\\ud83d\\ude00\\n\\t\\"", "k\\u0000": "x"}\n{"t": "\\ud800"}\n')
    put("jsonl", "hostile-number-range.jsonl", '{"a": 1}\n{"a": 1e999999}\n{"a": -1e-999999, "b": 123456789012345678901234567890}\n')
    put("jsonl", "hostile-deep-600.jsonl", '{"a": 1}\n{"d": ' + "[" * 600 + "]" * 600 + "}\n")
    put("jsonl", "hostile-deep-unclosed.jsonl", '{"d": ' + "[{\"x\":" * 300 + "\n")
    put("jsonl", "hostile-bytes.jsonl", b'{"a": "\xff\xfe"}\n{"b": "x\x00y"}\n{"c": "\xed\xa0\x80"}\n\x00\n')
    put("jsonl", "hostile-dup-keys.jsonl", '{"a": 1, "a": 2, "b": {"c": 1, "c": 2}}\n')
    put("jsonl", "hostile-not-object.jsonl", '[{"a": 1}]\n"text"\n42\n')
    put("jsonl", "hostile-cr-in-line.jsonl", '{"a":\r1}\n{"a"\r:\r2}\r\n')


# ---- csv (the last byte picks separator, quote and json_columns: see fuzz_csv.cpp) ---------------------
def csv():
    put("csv", "chatbot-example.csv", read("pipelines", "chatbot", "data", "example_data.csv") + b"\x00")
    put("csv", "semicolon-auto.csv", 'Original;Transformed\n"a; b";c\n"mit ""Zitat""";\n' + "\x04")
    put("csv", "tsv.csv", "a\tb\tc\n1\t2\t3\n\t\t\n" + "\x80")
    put("csv", "quoted-newlines.csv", 'a,b\n"line one\nline two","x"\r\n"",\n' + "\x00")
    put("csv", "json-columns.csv", 'id,retrieved_docs,a\n1,"[{""id"": ""d1"", ""text"": ""t""}]",\n2,,"{""k"": [1, 2]}"\n' + "\x20")
    put("csv", "single-quote.csv", "a,b\n'x,y',z\n" + "\x08")
    put("csv", "no-quote.csv", 'a|b\n"x|y"|z\n' + "\x13")
    put("csv", "hostile-ragged.csv", "a,b,c\n1\n1,2,3,4,5\n,,\n" + "\x00")
    put("csv", "hostile-unclosed-quote.csv", 'a,b\n"never closed,1\n2,3\n' + "\x00")
    put("csv", "hostile-bytes.csv", b"\xef\xbb\xbfa,b\n\xff\xfe,\x00\n" + b"\x01")
    put("csv", "hostile-dup-header.csv", "a,a,,b\n1,2,3,4\n" + "\x00")
    put("csv", "hostile-json-column-bad.csv", 'x\n[[[[\n1e999999\n"{""a"": ' + "[" * 200 + '"\n' + "\x40")


# ---- xlsx ----------------------------------------------------------------------------------------------
WB = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="http://schemas.openxmlformats.org/'
      'spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
      '<sheets><sheet name="Tabelle1" sheetId="1" r:id="rId1"/></sheets></workbook>')
RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
SST = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/'
       'spreadsheetml/2006/main" count="3" uniqueCount="3"><si><t>Original</t></si><si><t xml:space="preserve">'
       'Gr&#246;&#xDF;e &amp; &lt;Ma&#223;&gt;</t></si><si><r><t>rich </t></r><r><t>text</t></r><rPh><t>ph</t></rPh></si>'
       '<si/></sst>')
SHEET = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/'
         'spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t>Zahl'
         '</t></is></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2" t="b"><v>1</v></c><c r="C2"><v>3.5</v></c>'
         '</row><row r="4"><c r="A4" t="s"><v>2</v></c><c r="B4"><f>B2*2</f><v>2</v></c></row><row r="5"/></sheetData>'
         '</worksheet>')


def xlsx_bytes(files, method=zipfile.ZIP_DEFLATED):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        for name, text in files:
            z.writestr(name, text)
    return b.getvalue()


def xlsx():
    real = os.path.join(HERE, "corpus", "xlsx", "libxlsxwriter.xlsx")
    if not os.path.exists(real):
        print("note: corpus/xlsx/libxlsxwriter.xlsx is written by libxlsxwriter (see the README), not by this script")
    full = [("xl/workbook.xml", WB), ("xl/_rels/workbook.xml.rels", RELS), ("xl/sharedStrings.xml", SST),
            ("xl/worksheets/sheet1.xml", SHEET)]
    put("xlsx", "minimal-deflate.xlsx", xlsx_bytes(full))
    put("xlsx", "minimal-stored.xlsx", xlsx_bytes(full, zipfile.ZIP_STORED))
    put("xlsx", "no-workbook.xlsx", xlsx_bytes([("xl/worksheets/sheet1.xml", SHEET)], zipfile.ZIP_STORED))
    put("xlsx", "inline-only.xlsx", xlsx_bytes([("xl/worksheets/sheet1.xml",
        '<worksheet><sheetData><row><c t="inlineStr"><is><t>a</t></is></c><c><v>1</v></c></row></sheetData></worksheet>')],
        zipfile.ZIP_STORED))
    put("xlsx", "hostile-truncated.xlsx", xlsx_bytes(full)[:-30])
    put("xlsx", "hostile-not-zip.xlsx", b"PK\x03\x04 not really a zip file at all, just text")
    put("xlsx", "hostile-bad-refs.xlsx", xlsx_bytes([("xl/worksheets/sheet1.xml",
        '<worksheet><sheetData><row r="99999999999999999999"><c r="ZZZZZZZZZZ1" t="s"><v>7</v></c></row>'
        '<row r="0"><c r="1A"><v>&#99999999;&#x;&bogus;</v></c></row></sheetData></worksheet>')], zipfile.ZIP_STORED))
    # A central directory claiming a huge uncompressed size.
    z = bytearray(xlsx_bytes(full))
    eocd = z.rfind(b"PK\x05\x06")
    cd = int.from_bytes(z[eocd + 16:eocd + 20], "little")
    z[cd + 24:cd + 28] = (0xFFFFFFF0).to_bytes(4, "little")
    put("xlsx", "hostile-huge-usize.xlsx", bytes(z))


# ---- llm_response: raw HTTP responses of an OpenAI-compatible server -----------------------------------
def http(status, body, ctype="application/json", extra="", reason="OK"):
    if isinstance(body, str):
        body = body.encode("utf-8")
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


def chat(content):
    return json.dumps({"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}})


JUDGEMENT = json.dumps({"criterionResults": [
    {"criterionId": "factual_accuracy", "score": 4, "reasoning": "ok"},
    {"criterionId": "completeness", "score": 3.5, "reasoning": "most"}],
    "aggregateScore": 3.7, "dimensionScores": {"accuracy": 4}})
SECTIONS = json.dumps({"intent": "fix the login", "file_notes": [{"path": "app/tokens.py", "change": "decode removed"}],
                       "decisions": [{"decision": "pin PyJWT", "rationale": "API change", "alternatives": "none"}],
                       "errors": ["AttributeError"], "current_state": "tests pass", "next_steps": ["deploy"]})


def llm_response():
    put("llm_response", "chat-true.http", http(200, chat("True")))
    put("llm_response", "chat-verdict-json.http", http(200, chat('```json\n{"Verdict": "falsch."}\n```')))
    put("llm_response", "chat-judgement.http", http(200, chat(JUDGEMENT)))
    put("llm_response", "chat-sections.http", http(200, chat("```json\n" + SECTIONS + "\n```")))
    put("llm_response", "embeddings.http", http(200, json.dumps({"object": "list", "model": "e", "data": [
        {"index": 1, "embedding": [0.5, -1.25, 3e-3]}, {"index": 0, "embedding": [1, 0, 0]}]})))
    put("llm_response", "chunked.http", b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n10\r\n{\"choices\":[{\"me\r\n1f\r\nssage\":{\"content\":\"Wahr\"}}]}\r\n0\r\n\r\n")
    gz = gzip.compress(chat("False").encode())
    put("llm_response", "gzip.http", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: " + str(len(gz)).encode() + b"\r\n\r\n" + gz)
    put("llm_response", "429-retry-after.http", http(429, '{"error": {"message": "rate limited", "type": "requests"}}',
        extra="Retry-After: 2\r\nretry-after-ms: 1500\r\n", reason="Too Many Requests"))
    put("llm_response", "503-http-date.http", http(503, '{"error": "overloaded"}',
        extra="Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n", reason="Service Unavailable"))
    put("llm_response", "400-detail.http", http(400, '{"detail": "bad request: Authorization sk-fuzz-secret-key"}', reason="Bad Request"))
    put("llm_response", "100-continue.http", b"HTTP/1.1 100 Continue\r\n\r\n" + http(200, chat("true")))
    put("llm_response", "hostile-html.http", http(200, "<html><body>gateway</body></html>", ctype="text/html"))
    put("llm_response", "hostile-no-choices.http", http(200, '{"choices": [], "object": "x"}'))
    put("llm_response", "hostile-wrong-types.http", http(200, '{"choices": [{"message": {"content": ["a"]}}], "data": 7}'))
    put("llm_response", "hostile-deep.http", http(200, '{"choices": [{"message": {"content": "x", "extra": ' +
        "[" * 1000 + "]" * 1000 + "}}]}"))
    put("llm_response", "hostile-number.http", http(200, '{"choices": [{"message": {"content": "1"}}], "usage": '
        '{"prompt_tokens": 1e999999, "completion_tokens": -5}}'))
    put("llm_response", "hostile-short-body.http", b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\":")
    put("llm_response", "hostile-no-status.http", b"garbage without a status line\r\n\r\n{}")


# ---- judge_verdict: the answer text --------------------------------------------------------------------
def judge_verdict():
    for i, t in enumerate(["True", "False.", "  **wahr**!\n", "\u201eFalsch\u201c", "```\nTRUE\n```",
                           '{"verdict": true}', '{"Verdict": 0}', '```json\n{"verdict": "True."}\n```',
                           "True, because the text is shorter.", "", "Yes"]):
        put("judge_verdict", f"verdict-{i:02d}.txt", t)
    put("judge_verdict", "judgement.json", JUDGEMENT)
    put("judge_verdict", "judgement-fenced.txt", "```json\n" + JUDGEMENT + "\n```")
    put("judge_verdict", "sections.json", SECTIONS)
    put("judge_verdict", "hostile-judgement.json", '{"criterionResults": [{"criterionId": "completeness", "score": 1e999},'
        ' {"criterionId": "completeness", "score": -0.0}, {"criterionId": 7, "score": "5"}]}')
    put("judge_verdict", "hostile-deep.json", '{"verdict": ' + "[" * 2000 + "]" * 2000 + "}")
    put("judge_verdict", "hostile-bytes.txt", b"\xe2\x80\x9e\xe2\x80\x9c\xff\"'`*_ \t\r\n.!;:")


# ---- sdk_input: a process() input object (ports of the KSODI operators) --------------------------------
def sdk_input():
    for i, l in enumerate(lines("pipelines", "data", "ksodi_standard_sample.jsonl", n=4)):
        r = shrink_record(json.loads(l), 200)
        r["answer"] = r.get("assistant_text", "")
        r["_meta"] = {"record_index": i, "replication": 0}
        put("sdk_input", f"ksodi-standard-{i}.json", json.dumps(r, ensure_ascii=(i % 2 == 0)))
    put("sdk_input", "docs-strings.json", '{"answer": "A. B.", "retrieved_docs": ["eins", "zwei"], "tool_outputs": null}')
    put("sdk_input", "docs-in-string.json", json.dumps({"answer": "x", "retrieved_docs": json.dumps([{"doc_id": 3, "content": "t"}])}))
    put("sdk_input", "docs-keys.json", '{"answer": "x", "retrieved_docs": [{"name": "n", "page_content": "p"}, '
        '{"source": null, "output": {"k": 1}}, {"id": "i", "text": null, "result": "r"}]}')
    put("sdk_input", "sequence.json", '[{"answer": "a", "conversation_id": "c", "turn": 1}, {"answer": "b", "turn": 2}]')
    put("sdk_input", "escapes.json", '{"answer": "\\u00e4\\ud83d\\ude00 \\"q\\"", "user_text": "\\ud800", "system_prompt": 5}')
    put("sdk_input", "hostile-dup.json", '{"answer": "a", "answer": "b", "retrieved_docs": [{"text": "x", "text": "y"}]}')
    put("sdk_input", "hostile-number.json", '{"answer": "a", "n": 1e999999, "retrieved_docs": [{"text": "t", "id": 1e400}]}')
    put("sdk_input", "hostile-deep.json", '{"answer": "a", "x": ' + "[" * 300 + "]" * 300 + "}")
    put("sdk_input", "hostile-bytes.json", b'{"answer": "\xff", "retrieved_docs": ["\xc0\x80"]}')


# ---- json_scan: one JSON text for the scanner itself ------------------------------------------------------
def json_scan():
    put("json_scan", "object.json", '{"a":1,"b":[1,2,{"c":"d\\u00e9\\ud83d\\ude00"}],"e":null,"f":true,"g":false,"h":-0.5e10,"a":2}')
    put("json_scan", "array.json", '[1,"x",[],{},{"k":{"k":[[["deep"]]]}},"\\n\\t\\\\\\/"]')
    put("json_scan", "utf8.json", '"caf\u00e9 \U0001F600 \\u20ac"')
    put("json_scan", "number.json", "  -0.0e-5  ")
    put("json_scan", "ksodi-unit.json", json.dumps({"id": "u0", "answer": "Die Antwort. \"Zitat\"", "retrieved_docs": [{"id": "d", "text": "t\u00fc"}]}, ensure_ascii=False))
    put("json_scan", "hostile-number-range.json", '[1e999999]')
    put("json_scan", "hostile-lone-surrogate.json", '{"x":"\\ud800"}')
    put("json_scan", "hostile-literal-end.json", "[tru")
    put("json_scan", "hostile-bytes.json", b'["\xc0\x80", "\xed\xa0\x80"]')
    put("json_scan", "hostile-deep.json", "[" * 300 + "]" * 300)


# ---- plugin_params: node type on the first line, then its `with:` as JSON -----------------------------
def yaml_withs():
    """(uses, with) of the shipped pipelines, read with a tiny flow-mapping reader (no PyYAML needed)."""
    out = []
    for f in sorted(os.listdir(os.path.join(REPO, "pipelines"))):
        if not f.endswith(".yaml"):
            continue
        uses = None
        for line in read("pipelines", f).decode().splitlines():
            m = re.search(r"uses:\s*([\w.]+)", line)
            if m:
                uses = m.group(1)
            m = re.search(r"with:\s*(\{.*\})\s*(#.*)?$", line)
            if m and uses:
                text = re.sub(r"([{,]\s*)([\w-]+):", r'\1"\2":', m.group(1))
                text = re.sub(r':\s*([A-Za-z_][\w./-]*)', r': "\1"', text)
                try:
                    out.append((uses, json.loads(text)))
                except ValueError:
                    pass
    return out


def plugin_params():
    for i, (uses, w) in enumerate(yaml_withs()):
        put("plugin_params", f"{uses}-{i}.txt", uses + "\n" + json.dumps(w))
    extra = [
        ("transform.llm", {"provider": "model", "system_prompt": "Du bist {x}", "user_prompt": "{text}",
                           "inference": {"temperature": 0.7, "max_tokens": 100}, "transformation": "model"}),
        ("transform.http", {"url": "http://127.0.0.1:9/x", "body": {"q": "{text}"}, "answer_pointer": "/a/0",
                            "timeout_s": 1, "retries": 0}),
        ("judge.task_comparison", {"criterion": "Prägnanz", "description": "kurz", "provider": "judge"}),
        ("chatbot.score", {"weights": {"a": 2, "b": 1}}),
        ("ksodi.o0", {"alignment": "cosine", "tau": 0.5}),
        ("ksodi.s0", {"alpha": 1e308, "beta": -0.0, "gamma": 4.9e-324}),
        ("compression.anchored", {"provider": "m", "keep_recent": 9007199254740993, "trigger": {"every": 3}}),
        ("compression.probes", {"provider": "m", "decision_probes": 1e300}),
        ("sink.jsonl", {"file": "../x.jsonl"}),
        ("agent.trajectory", {"order": "any_order", "match": "subset", "forbidden": ["delete"], "max_steps": 9,
                              "allow_repeats": False,
                              "expected": [[{"name": "search", "arguments": {"q": {"$regex": "(?i)^w(a|aa)+$"}}}],
                                           [{"name": "lookup", "match": "regex", "arguments": {"id": ["\\d+", "(("]}}]]}),
        ("agent.trajectory", {"expected": [{"name": "x"}, [{"name": "y"}]], "order": "exact"}),
    ]
    for i, (uses, w) in enumerate(extra):
        put("plugin_params", f"extra-{i}-{uses}.txt", uses + "\n" + json.dumps(w, ensure_ascii=False))
    put("plugin_params", "hostile-not-object.txt", "ksodi.k0\n[1, 2, {\"a\": null}]")
    put("plugin_params", "hostile-unknown-type.txt", "no.such.type\n{\"x\": 1}")


# ---- config_dir: the files of a --config-dir folder, each after '#=> <name>' ---------------------------
def config_dir():
    names = ["evaluation.yaml", "llm_parameters.yaml", "llm_system_prompts.yaml", "llm_tasks.yaml", "evalgraph_models.yaml"]

    def pack(files):
        return "".join(f"#=> {n}\n{t if t.endswith(chr(10)) else t + chr(10)}" for n, t in files)

    real = [(n, read("pipelines", "chatbot", "config", n).decode()) for n in names]
    csv_data = read("pipelines", "chatbot", "data", "example_data.csv").decode()
    put("config_dir", "shipped.txt", pack(real + [("example_data.csv", csv_data)]))
    put("config_dir", "no-models.txt", pack(real[:4] + [("example_data.csv", csv_data)]))
    put("config_dir", "evaluation-only.txt", pack(real[:1]))
    small_eval = ("experiment_name: x\ndata_files: [example_data]\nreplications: \"2\"\ncsv_separator: \";\"\n"
                  "input_column_name: Original\ntransformations:\n  manual: {type: manual, label: M, column: Original}\n"
                  "tasks: [Kurz]\nindices: [Lesbarkeit]\nscore_weighting: {Kurz: 0, Lesbarkeit: 1e999}\n")
    put("config_dir", "manual-semicolon.txt", pack([("evaluation.yaml", small_eval), real[1], real[2],
        ("llm_tasks.yaml", "Kurz: |\n  kurz\n"), ("example_data.csv", "Original;X\n\"a;b\";c\n")]))
    put("config_dir", "hostile-types.txt", pack([("evaluation.yaml", "experiment_name: [a]\ndata_files: {a: 1}\n"
        "replications: -1\ntransformations: [1, 2]\ntasks: {x: y}\nindices: 7\n"), ("llm_parameters.yaml", "evaluation: []\n"),
        ("llm_tasks.yaml", "- a\n- b\n"), ("evalgraph_models.yaml", "models: [x]\n")]))
    put("config_dir", "hostile-yaml.txt", pack([("evaluation.yaml", "a: [\n  - }\n\t: x\n"),
        ("llm_parameters.yaml", "evaluation: &x {a: 1}\nother: [*x, *x]\n"), ("llm_tasks.yaml", "\xff\xfe: \x00\n")]))
    put("config_dir", "hostile-deep.txt", pack([("evaluation.yaml", "tasks: " + "[" * 200 + "]" * 200 + "\n")] + real[1:4]))


# ---- otlp (the trace reader) ----------------------------------------------------------------------------
def otlp():
    fx = ("tests", "traces", "fixtures")
    for name in ("openinference-traces.jsonl", "openllmetry-traces.jsonl", "genai-traces.jsonl", "genai-logs.jsonl"):
        put("otlp", name, b"\n".join(lines(*fx, name, n=2)) + b"\n")
    t = "0af7651916cd43dd8448eb211c80319c"
    span = lambda sid, parent, attrs: {"traceId": t, "spanId": sid, "parentSpanId": parent, "name": "s",
                                       "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                                       "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs]}
    req = lambda spans: json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]})
    llm = [("openinference.span.kind", "LLM"), ("llm.input_messages.0.message.role", "user"),
           ("llm.input_messages.0.message.content", "q"), ("llm.output_messages.0.message.content", "a")]
    put("otlp", "cycle.jsonl", req([span("00000000000000a1", "00000000000000a2", llm), span("00000000000000a2", "00000000000000a1", [])]))
    put("otlp", "genai-parts.jsonl", req([span("00000000000000b1", "", [("gen_ai.operation.name", "chat"),
        ("gen_ai.input.messages", '[{"role":"user","parts":[{"type":"text","content":"q"}]}]'),
        ("gen_ai.output.messages", '[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","arguments":{"x":1}}]}]')])]))
    put("otlp", "truncated.jsonl", req([span("00000000000000c1", "", llm)])[:150] + "\n" + req([span("00000000000000c2", "", llm)]))
    put("otlp", "document.json", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span("00000000000000d1", "", llm)]}]}]}, indent=2))


def main():
    pipeline()
    jsonl()
    csv()
    xlsx()
    llm_response()
    judge_verdict()
    sdk_input()
    json_scan()
    plugin_params()
    config_dir()
    otlp()


if __name__ == "__main__":
    main()
