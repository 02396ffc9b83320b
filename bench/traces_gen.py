#!/usr/bin/env python3
"""Generates an OTLP/JSON trace file as the Collector's file exporter writes it (one export request per line) for
bench/traces_bench.sh: TRACES traces of 5 spans (agent root, retriever, tool, two LLM calls; OpenInference and GenAI
attributes alternate by trace), about BYTES_PER_SPAN bytes each. Spans of a trace are spread over several batches:
they are emitted in a shuffled order from a window of 1,000 open traces, children mostly before their root.
usage: traces_gen.py OUT TRACES [BYTES_PER_SPAN] [SESSIONS]"""
import json
import random
import sys

out, traces = sys.argv[1], int(sys.argv[2])
span_bytes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
sessions = int(sys.argv[4]) if len(sys.argv) > 4 else max(1, traces // 4)
rng = random.Random(38)
WORDS = ("order ship return refund express parcel invoice status delivery warehouse customer address "
         "payment voucher tracking courier").split()


def text(n):
    return " ".join(rng.choice(WORDS) for _ in range(max(1, n // 7)))[:n]


def attr(k, v):
    if isinstance(v, bool):
        return {"key": k, "value": {"boolValue": v}}
    if isinstance(v, int):
        return {"key": k, "value": {"intValue": str(v)}}
    if isinstance(v, float):
        return {"key": k, "value": {"doubleValue": v}}
    return {"key": k, "value": {"stringValue": v}}


def span(tid, sid, parent, name, t0, t1, attrs):
    s = {"traceId": tid, "spanId": sid, "name": name, "kind": 1, "startTimeUnixNano": str(t0),
         "endTimeUnixNano": str(t1), "attributes": [attr(k, v) for k, v in attrs], "status": {}}
    if parent:
        s["parentSpanId"] = parent
    return s


def trace_spans(i):
    tid = "%032x" % rng.getrandbits(128)
    ids = ["%016x" % rng.getrandbits(64) for _ in range(5)]
    t = 1_700_000_000_000_000_000 + i * 1_000_000_000
    oi = i % 2 == 0
    session = "s-%d" % (i % sessions)
    body = max(50, (span_bytes - 400) // 2)
    q, a = text(body // 4), text(body)
    if oi:
        root = [("openinference.span.kind", "AGENT"), ("session.id", session), ("input.value", q)]
        ret = [("openinference.span.kind", "RETRIEVER"), ("retrieval.documents.0.document.id", "kb-%d" % (i % 97)),
               ("retrieval.documents.0.document.content", text(body)), ("retrieval.documents.0.document.score", 0.5)]
        tool = [("openinference.span.kind", "TOOL"), ("tool.name", "get_order_status"), ("tool_call.id", "c%d" % i),
                ("input.value", json.dumps({"order_id": "A%d" % i})), ("output.value", text(body // 2))]
        llm1 = [("openinference.span.kind", "LLM"), ("llm.model_name", "m"), ("llm.input_messages.0.message.role", "system"),
                ("llm.input_messages.0.message.content", text(body // 2)), ("llm.input_messages.1.message.role", "user"),
                ("llm.input_messages.1.message.content", q), ("llm.output_messages.0.message.role", "assistant"),
                ("llm.output_messages.0.message.tool_calls.0.tool_call.id", "c%d" % i),
                ("llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "get_order_status"),
                ("llm.token_count.prompt", 100), ("llm.token_count.completion", 10)]
        llm2 = [("openinference.span.kind", "LLM"), ("llm.model_name", "m"), ("llm.input_messages.0.message.role", "user"),
                ("llm.input_messages.0.message.content", q), ("llm.output_messages.0.message.role", "assistant"),
                ("llm.output_messages.0.message.content", a), ("llm.token_count.prompt", 120)]
    else:
        root = [("gen_ai.operation.name", "invoke_agent"), ("gen_ai.conversation.id", session)]
        ret = [("gen_ai.operation.name", "retrieval"),
               ("gen_ai.retrieval.documents", json.dumps([{"id": "kb-%d" % (i % 97), "content": text(body), "score": 0.5}]))]
        tool = [("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "get_order_status"), ("gen_ai.tool.call.id", "c%d" % i),
                ("gen_ai.tool.call.arguments", json.dumps({"order_id": "A%d" % i})), ("gen_ai.tool.call.result", text(body // 2))]
        msgs = [{"role": "system", "parts": [{"type": "text", "content": text(body // 2)}]},
                {"role": "user", "parts": [{"type": "text", "content": q}]}]
        llm1 = [("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "m"), ("gen_ai.input.messages", json.dumps(msgs)),
                ("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c%d" % i,
                                                                                       "name": "get_order_status", "arguments": {}}]}])),
                ("gen_ai.usage.input_tokens", 100)]
        llm2 = [("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "m"),
                ("gen_ai.input.messages", json.dumps(msgs[1:])),
                ("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": a}]}])),
                ("gen_ai.usage.output_tokens", 20)]
    return [span(tid, ids[1], ids[0], "retrieve", t + 1000, t + 2000, ret),
            span(tid, ids[2], ids[0], "tool", t + 3000, t + 4000, tool),
            span(tid, ids[3], ids[0], "llm", t + 5000, t + 6000, llm1),
            span(tid, ids[4], ids[0], "llm", t + 7000, t + 8000, llm2),
            span(tid, ids[0], "", "agent", t, t + 9000, root)]


RESOURCE = {"attributes": [attr("service.name", "bench-agent")]}
with open(out, "w") as f:
    window, batch, made = [], [], 0

    def flush():
        req = {"resourceSpans": [{"resource": RESOURCE, "scopeSpans": [{"scope": {"name": "bench"}, "spans": batch}]}]}
        f.write(json.dumps(req, separators=(",", ":")))
        f.write("\n")
        batch.clear()

    while made < traces or window:
        while made < traces and len(window) < 1000:
            window.append(trace_spans(made))
            made += 1
        k = rng.randrange(len(window))
        batch.append(window[k].pop(0))
        if not window[k]:
            window.pop(k)
        if len(batch) == 200:
            flush()
    if batch:
        flush()
