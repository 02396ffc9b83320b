#!/usr/bin/env python3
"""Checks that trace files of one agent run, instrumented under different conventions, became the same records:
per record (in session, start order) the session, question, answer, system prompt, documents (id, text), and
tool calls (name, arguments, result, error). Prints the first difference and exits 1; prints a summary else.
usage: compare_records.py RECORDS.jsonl RECORDS.jsonl..."""
import json
import sys


def view(rec):
    return {
        "session_id": rec.get("session_id"),
        "user_text": rec.get("user_text"),
        "assistant_text": rec.get("assistant_text"),
        "system_prompt": rec.get("system_prompt"),
        "model": rec.get("model"),
        "retrieved_docs": [(d.get("id"), d.get("text")) for d in rec.get("retrieved_docs", [])],
        "tool_calls": [(c.get("name"), json.dumps(c.get("arguments"), sort_keys=True), c.get("result"), c.get("error"))
                       for c in rec.get("tool_calls", [])],
        "tool_names": sorted(t.get("name") for t in rec.get("tools", [])),
        "messages": [(m.get("role"), m.get("content")) for m in rec.get("messages", [])],
    }


def load(path):
    with open(path, encoding="utf-8") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    return sorted((view(r) for r in recs), key=lambda v: (v["session_id"] or "", v["user_text"] or ""))


def main():
    files = sys.argv[1:]
    base = load(files[0])
    if not base or any(not r["assistant_text"] for r in base):
        print(f"{files[0]}: no records, or a record without an answer: {base}")
        return 1
    for other in files[1:]:
        recs = load(other)
        if len(recs) != len(base):
            print(f"{other}: {len(recs)} records, {files[0]}: {len(base)}")
            return 1
        for i, (a, b) in enumerate(zip(base, recs)):
            for k in a:
                # The GenAI instrumentation of openai does not record the tools offered (no gen_ai.tool.definitions).
                if k == "tool_names" and (not a[k] or not b[k]):
                    continue
                if a[k] != b[k]:
                    print(f"record {i + 1} differs in {k}:\n  {files[0]}: {a[k]}\n  {other}: {b[k]}")
                    return 1
    print(f"{len(base)} records alike in {len(files)} files; tool calls: {sum(len(r['tool_calls']) for r in base)}, "
          f"documents: {sum(len(r['retrieved_docs']) for r in base)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
