#!/usr/bin/env python3
"""What the latencies a run actually drew allow: two references for bench/pipeline_bench.sh's heavy-tailed runs.

N*k*L/C uses the mean latency. With heavy-tailed latency no scheduler reaches it on 1,000 records: the slowest
calls decide the end. This reads the test server's request log (one JSON line per request: t_s, delay_ms, body),
groups the calls by record (the bench's records say "Question <n>:"), orders each record's calls by arrival, and
prints
  bound_s   a lower bound for any scheduler, even one that knew every latency in advance:
            max(sum of latencies / C, the longest record's calls one after the other)
  sched_s   the makespan of the engine's own policy with zero overhead and no knowledge of the latencies:
            C slots; a free slot takes the waiting call of the record with the most LLM calls left, oldest
            first; a record's next call waits for its previous one; records enter in chunks of CHUNK under a
            window of WINDOW records, a chunk leaving when it and every chunk before it are done (the
            engine's reorder buffer)
Usage: schedule_bound.py LOG C [CHUNK WINDOW]   (prints "bound_s sched_s")

       schedule_bound.py --study [DRAWS]
draws the bench's shapes (k = 1, 2, 3 calls per record, 1,000 records, and k = 2 with 10,000; C = 64, mean
100 ms, log-normal sigma 1) DRAWS times (100) and prints, as ratios to N*k*L/C, the median and 90th percentile of
the bound, of the engine's policy and of a clairvoyant one (the record with the longest remaining calls first,
which no real scheduler can know), and the share of draws each keeps within 1.25.
"""
import heapq
import json
import math
import random
import re
import statistics
import sys


def read_calls(path):
    per_record = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if "chat/completions" not in r.get("target", ""):
            continue
        m = re.search(r"Question (\d+):", r["body"])
        if not m:
            raise SystemExit(f"{path}: a request names no 'Question <n>:'; is this the bench's log?")
        per_record.setdefault(int(m.group(1)), []).append((r["t_s"], r["delay_ms"] / 1000.0))
    return [[d for _, d in sorted(calls)] for _, calls in sorted(per_record.items())]


def engine_policy(record, call):
    """The engine's order among waiting calls (smallest first): the record with the most LLM calls left."""
    return -(len(record) - call)


def clairvoyant_policy(record, call):
    """For reference only: the record with the longest remaining latency first (needs the latencies ahead)."""
    return -sum(record[call:])


def simulate(records, slots, chunk, window, policy=engine_policy):
    n = len(records)
    chunks = [list(range(i, min(i + chunk, n))) for i in range(0, n, chunk)]
    left_in_chunk = [len(c) for c in chunks]
    ready = []  # (policy key, seq, record)
    seq = 0
    running = []  # (end time, record)
    next_call = [0] * n
    now = 0.0
    in_flight = 0
    admitted = 0  # chunks admitted
    written = 0  # chunks written (left the window)

    def admit():
        nonlocal admitted, in_flight, seq
        while admitted < len(chunks) and (in_flight == 0 or in_flight + len(chunks[admitted]) <= window):
            for r in chunks[admitted]:
                heapq.heappush(ready, (policy(records[r], 0), seq, r))
                seq += 1
            in_flight += len(chunks[admitted])
            admitted += 1

    admit()
    free = slots
    while ready or running:
        while free > 0 and ready:
            _, _, r = heapq.heappop(ready)
            heapq.heappush(running, (now + records[r][next_call[r]], r))
            free -= 1
        now, r = heapq.heappop(running)
        free += 1
        next_call[r] += 1
        if next_call[r] < len(records[r]):
            heapq.heappush(ready, (policy(records[r], next_call[r]), seq, r))
            seq += 1
            continue
        left_in_chunk[r // chunk] -= 1
        while written < admitted and left_in_chunk[written] == 0:
            in_flight -= len(chunks[written])
            written += 1
        admit()
    return now


def bound(records, slots):
    return max(sum(sum(r) for r in records) / slots, max(sum(r) for r in records))


def study(draws):
    sigma, mean, slots = 1.0, 0.1, 64
    mu = math.log(mean) - sigma * sigma / 2
    print("ratios to N*k*L/C over %d draws: median / 90th percentile / share of draws <= 1.25" % draws)
    for k, n in ((1, 1000), (2, 1000), (3, 1000), (2, 10000)):
        rows = {"bound": [], "engine policy": [], "clairvoyant": []}
        for d in range(draws if n <= 1000 else max(1, draws // 10)):
            rng = random.Random(d)
            records = [[rng.lognormvariate(mu, sigma) for _ in range(k)] for _ in range(n)]
            limit = n * k * mean / slots
            rows["bound"].append(bound(records, slots) / limit)
            rows["engine policy"].append(simulate(records, slots, 256, 1 << 60) / limit)
            rows["clairvoyant"].append(simulate(records, slots, 256, 1 << 60, clairvoyant_policy) / limit)
        cells = []
        for name, v in rows.items():
            v.sort()
            cells.append("%s %.2f / %.2f / %.0f%%" % (name, statistics.median(v), v[max(0, int(len(v) * 0.9) - 1)],
                                                    100.0 * sum(x <= 1.25 for x in v) / len(v)))
        print("k=%d N=%d (%d draws): %s" % (k, n, len(v), "; ".join(cells)))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--study":
        study(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
        return
    if len(sys.argv) not in (3, 5):
        raise SystemExit(__doc__)
    records = read_calls(sys.argv[1])
    if not records:
        raise SystemExit(f"{sys.argv[1]}: no chat requests")
    slots = int(sys.argv[2])
    chunk = int(sys.argv[3]) if len(sys.argv) == 5 else 256
    window = int(sys.argv[4]) if len(sys.argv) == 5 else 1 << 60
    print(f"{bound(records, slots):.3f} {simulate(records, slots, chunk, window):.3f}")


if __name__ == "__main__":
    main()
