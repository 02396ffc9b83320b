#!/usr/bin/env python3
"""Agreement of the KSODI operators with human labels: AUROC with a 95 % bootstrap interval.

Reads the engine's detailed.jsonl of bench/validity.sh (one record per labelled unit, the dataset's fields
plus the node outputs) and prints one row per score. Standard library only.

  validity_stats.py DETAILED_JSONL [--seconds S] [--boot N]
"""
import argparse, json, random, re, sys

# Binary split of the FaithDial BEGIN labels (see the data set's README): faithful vs hallucinated.
FAITHFUL = {"entailment", "entailment,uncooperative"}
UNFAITHFUL = {"hallucination"}

# K-Precision (Adlakha et al. 2023): share of the response's word tokens found in the knowledge, lower-cased,
# English stop words removed. The lexical baseline the operators must beat.
STOP_EN = set("""i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these those am is are was
were be been being have has had having do does did doing a an the and but if or because as until while of at by for
with about against between into through during before after above below to from up down in out on off over under
again further then once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn
hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn""".split())
WORD = re.compile(r"\w+", re.U)


def k_precision(answer, docs):
    know = set(t.lower() for d in docs for t in WORD.findall(d.get("text", "")))
    toks = [t.lower() for t in WORD.findall(answer) if t.lower() not in STOP_EN]
    return sum(t in know for t in toks) / len(toks) if toks else 0.0


def stop_word_containment(answer, docs):
    """Share of the response's stop words (I, you, my, yes, ...) that occur in the knowledge: a measure of style,
    not of grounding. Printed as a diagnostic: where it separates the labels, the labels also follow how a
    response is phrased, which no grounding measure should fit."""
    know = set(t.lower() for d in docs for t in WORD.findall(d.get("text", "")))
    toks = [t.lower() for t in WORD.findall(answer) if t.lower() in STOP_EN]
    return sum(t in know for t in toks) / len(toks) if toks else 1.0


def auroc(pos, neg):
    """P(score of a faithful unit > score of a hallucinated one), ties counted half (Mann-Whitney)."""
    allv = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    rank_sum, i, n = 0.0, 0, len(allv)
    while i < n:
        j = i
        while j + 1 < n and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2 + 1
        rank_sum += r * sum(1 for k in range(i, j + 1) if allv[k][1] == 1)
        i = j + 1
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def bootstrap(pos, neg, boot, rng):
    vals = sorted(auroc([rng.choice(pos) for _ in pos], [rng.choice(neg) for _ in neg]) for _ in range(boot))
    return vals[int(0.025 * boot)], vals[int(0.975 * boot) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("detailed")
    ap.add_argument("--seconds", type=float, default=None, help="wall time of the engine run (for units/s)")
    ap.add_argument("--boot", type=int, default=1000)
    a = ap.parse_args()
    recs = [json.loads(l) for l in open(a.detailed, encoding="utf-8") if l.strip()]
    scores = {}  # name -> list of (label, value)

    def add(name, label, v):
        if v is not None:
            scores.setdefault(name, []).append((label, v))

    nodes = [k for k in (recs[0] if recs else {}) if k.startswith("o0")]
    for r in recs:
        l = r.get("label", "").lower()
        label = 1 if l in FAITHFUL else 0 if l in UNFAITHFUL else None
        if label is None:
            continue
        for node in nodes:
            o = r.get(node) or {}
            p = o.get("parameters", {})
            tag = f"{node} ({p.get('alignment', 'cosine')})"
            add(f"{tag} O0", label, o.get("O0"))
            add(f"{tag} A_ret", label, o.get("A_ret"))
            add(f"{tag} 1 - U", label, None if o.get("U") is None else 1 - o["U"])
            add(f"{tag} T", label, o.get("T"))
        add("baseline K-Precision", label, k_precision(r.get("assistant_text", ""), r.get("retrieved_docs", [])))
        add("trap: response length (chars)", label, len(r.get("assistant_text", "")))
        add("style: response stop words in knowledge", label,
            stop_word_containment(r.get("assistant_text", ""), r.get("retrieved_docs", [])))
    rng = random.Random(20261123)
    n_units = len(recs)
    first = next(iter(scores.values()), [])
    npos = sum(1 for l, _ in first if l == 1)
    print(f"units: {n_units} (binary split: {npos} faithful, {len(first) - npos} hallucinated)")
    if a.seconds:
        print(f"engine run: {a.seconds:.2f} s wall, {n_units / a.seconds:,.0f} units/s")
    print(f"{'score':44s} {'AUROC':>6s}  95% bootstrap CI ({a.boot} resamples)")
    for name, v in scores.items():
        pos = [x for l, x in v if l == 1]
        neg = [x for l, x in v if l == 0]
        lo, hi = bootstrap(pos, neg, a.boot, rng)
        print(f"{name:44s} {auroc(pos, neg):6.3f}  [{lo:.3f}, {hi:.3f}]")


if __name__ == "__main__":
    sys.exit(main())
