#!/usr/bin/python3
"""`evalgraph agree` end to end against an independent computation (issue #36).

For several seeds a finished run folder is written as bench/agreement_bench.sh does (run.json naming
detailed.jsonl, pipeline.yaml with labels: and agreement:) from random data with: one to three annotators per
record (rows per (record, annotator) in a shuffled labels file, some values null or absent), records without
labels, label rows for keys not in the data, keys written as a number in the data and as text in the labels,
majority ties, a metric missing or null, off-scale texts, and replications (_replication 0, 1, 2 rows following
each other: numbers averaged, booleans and texts by majority, a tie left out). One entry per type pair:
binary vs binary, category vs category (positive: outage), ordinal vs ordinal on its scale (weighted kappa),
number vs binary (AUROC, threshold), number vs number and number vs ordinal (correlations).

Python then forms the consensus and the pairs itself and compares with `evalgraph agree --json RUN`: kind, n,
left_out counts, the labels' counts (records, labelled, unlabelled, unknown_keys, annotators), confusion
matrix and its cells, every point statistic (scikit-learn, scipy) to 1e-9, the people's ceiling (each
annotator against the others' consensus, in the headline statistic) and Krippendorff's alpha per field with
several annotators (agreement_reference.alpha_reference). A last run has one class only: where scikit-learn or
scipy give nan, warn or raise, the engine must say {"defined": false, "why": ...}.

usage: agree_end_to_end.py EVALGRAPH     (exit 77 when numpy, scipy or scikit-learn is missing: ctest's skip)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    from scipy import stats as sps
    from sklearn import metrics as skm
    import agreement_reference as ref  # exits 77 itself without them
except ImportError as e:
    print(f"SKIP: {e} (install python3-numpy, python3-scipy and python3-sklearn)")
    sys.exit(77)

TOL = 1e-9
TOPICS = ["billing", "outage", "other"]
QUALITY = [1, 2, 3, 4, 5]
PEOPLE = ["ana", "ben", "cat", "dan"]
FIELDS = {"faithful": "binary", "topic": "category", "quality": "ordinal", "rating": "number"}
# (metric, label, kind, headline, positive code or None)
ENTRIES = [("judge.verdict", "faithful", "classification", "kappa", 1),
           ("judge.topic", "topic", "classification", "kappa", TOPICS.index("outage")),
           ("judge.quality", "quality", "classification", "weighted_kappa", None),
           ("judge.score", "faithful", "score_vs_binary", "auroc", 1),
           ("judge.score", "rating", "correlation", "spearman", None),
           ("judge.score", "quality", "correlation", "spearman", None)]
failures, checked = [], 0


def check(ok, what):
    global checked
    checked += 1
    if not ok:
        failures.append(what)


def expect_stat(got, expected, what):
    """expected None or nan: the reference says 'not defined'."""
    if got is None:
        return check(False, f"{what}: missing from the output")
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        return check(not got["defined"] and got.get("why"), f"{what}: expected not defined, got {got}")
    check(got["defined"], f"{what}: expected {expected!r}, got not defined ({got.get('why')})")
    if got["defined"]:
        check(abs(got["value"] - expected) <= TOL, f"{what}: {got['value']!r} != reference {expected!r}")
        check(got["low"] - TOL <= got["value"] <= got["high"] + TOL, f"{what}: interval not around value {got}")


# ---- random data ----

def make_run(rng, single):
    """records: [(key written in data, [judge dict or None per replication], replication style)];
    rows: the labels file's rows in file order."""
    pick = lambda seq, p=None: seq[rng.choice(len(seq), p=p)]
    records, rows = [], []
    for i in range(int(rng.randint(150, 260))):
        key = 1000 + i if i % 7 == 0 else f"r{i}"  # a number in the data, text in the labels: one key
        truth = True if single else bool(rng.rand() < 0.45)
        topic = 0 if single else int(rng.randint(3))
        quality = 3 if single else int(rng.randint(1, 6))
        rating = 5.0 if single else 5 + 4 * truth + float(rng.randn())
        nrep = int(pick([1, 2, 3], [0.7, 0.15, 0.15]))
        q_metric = 3 if single else int(np.clip(quality + pick([-1, 0, 0, 1]), 1, 5))
        qs = [q_metric] * nrep
        if nrep == 3 and 2 <= q_metric <= 4 and rng.rand() < 0.5:
            qs = [q_metric - 1, q_metric + 1, q_metric]  # mean on the scale: the entry stays ordinal
        q_missing = rng.rand() < 0.05
        reps = []
        for r in range(nrep):
            judge = {}
            u = rng.rand()
            if u < 0.05:
                judge["verdict"] = None
            elif u > 0.03 + 0.05:
                judge["verdict"] = truth if single else bool(truth != (rng.rand() < 0.2))
            u = rng.rand()
            if not single and u < 0.03:
                judge["topic"] = "spam"  # off the label's scale
            elif u < 0.97:
                judge["topic"] = TOPICS[0 if single else topic if rng.rand() < 0.7 else int(rng.randint(3))]
            if not q_missing:
                judge["quality"] = qs[r]
            judge["score"] = round(0.3 * truth + 0.25 * float(rng.randn()), 3)  # rounded: tied scores
            reps.append(None if nrep == 1 and rng.rand() < 0.02 else judge)
        records.append((key, reps, "absent" if nrep == 1 and rng.rand() < 0.5 else "numbered"))
        who = rng.permutation(PEOPLE)[:int(pick([0, 1, 2, 3], [0.15, 0.3, 0.3, 0.25]))]
        for person in who:
            row = {"id": str(key), "rater": str(person)}
            values = {"faithful": True if single else bool(truth != (rng.rand() < 0.15)),
                      "topic": TOPICS[topic if rng.rand() < 0.75 else int(rng.randint(3))],
                      "quality": 3 if single else int(np.clip(quality + pick([-1, 0, 0, 0, 1]), 1, 5)),
                      "rating": rating if single else round(rating + 0.8 * float(rng.randn()), 2)}
            empty = rng.rand() < 0.03  # a row with no value at all
            for f, v in values.items():
                u = rng.rand()
                if empty or u < 0.08:
                    row[f] = None
                elif u > 0.05 + 0.08:
                    row[f] = v
            rows.append(row)
    for g in range(int(rng.randint(3, 9))):  # labels for records that are not in the data
        for person in rng.permutation(PEOPLE)[:int(rng.randint(1, 3))]:
            rows.append({"id": f"ghost{g}", "rater": str(person), "faithful": bool(rng.rand() < 0.5)})
    return records, [rows[i] for i in rng.permutation(len(rows))]


def write_run(folder, records, rows):
    run = os.path.join(folder, "run")
    os.makedirs(run)
    with open(os.path.join(run, "detailed.jsonl"), "w") as d:
        for key, reps, style in records:
            for r, judge in enumerate(reps):
                rec = {"id": key, "question": "q"}
                if style == "numbered" or r > 0:
                    rec["_replication"] = r
                if judge is not None:
                    rec["judge"] = judge
                d.write(json.dumps(rec) + "\n")
    labels = os.path.join(folder, "labels.jsonl")
    with open(labels, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    agreement = "\n".join(f"  - {{metric: {m}, label: {l}" + (", positive: outage" if l == "topic" else "") + "}"
                          for m, l, *_ in ENTRIES)
    with open(os.path.join(run, "pipeline.yaml"), "w") as p:
        p.write(f"""name: agree-end-to-end
dataset: {{path: {folder}/data.jsonl}}
labels:
  path: {labels}
  key: id
  annotator: rater
  fields:
    faithful: {{type: binary}}
    topic: {{type: category, values: [{", ".join(TOPICS)}]}}
    quality: {{type: ordinal, values: [{", ".join(map(str, QUALITY))}]}}
    rating: {{type: number}}
nodes:
  - {{id: judge, uses: test.none}}
agreement:
{agreement}
""")
    with open(os.path.join(run, "run.json"), "w") as r:
        json.dump({"pipeline": "agree-end-to-end", "pipeline_file": os.path.join(run, "pipeline.yaml"),
                   "records_file": "detailed.jsonl", "sinks": {}}, r)
    return run


# ---- the reference: consensus, pairs, statistics ----

def code_of(field, v):
    return {"binary": lambda: float(v), "category": lambda: float(TOPICS.index(v)),
            "ordinal": lambda: float(QUALITY.index(v)), "number": lambda: float(v)}[FIELDS[field]]()


def metric_value(reps, name):
    """A record's replications as one value: ('n', mean) / ('b', 0|1) / ('t', text) / ('missing',) / ('tie',)."""
    vals = []
    for judge in reps:
        v = None if judge is None else judge.get(name)
        vals.append(None if v is None else ("b", float(v)) if isinstance(v, bool) else
                    ("t", v) if isinstance(v, str) else ("n", float(v)))
    if len(vals) == 1:
        return vals[0] or ("missing",)
    present = [v for v in vals if v is not None]
    if not present:
        return ("missing",)
    if any(t == "n" for t, _ in present) and not any(t == "t" for t, _ in present):
        total = 0.0
        for _, x in present:
            total += x
        return ("n", total / len(present))
    top = Counter(present).most_common()
    return ("tie",) if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]


def consensus(field, codes):
    """(code, mean, tie) of one field's labels; None without any."""
    if not codes:
        return None
    t = FIELDS[field]
    if t in ("binary", "category"):
        top = Counter(codes).most_common()
        return top[0][0], None, len(top) > 1 and top[0][1] == top[1][1]
    m = sum(codes) / len(codes)
    if t == "ordinal":
        return float(math.floor(m + 0.5)), sum(QUALITY[int(c)] for c in codes) / len(codes), \
            abs(m - math.floor(m) - 0.5) < 1e-12
    return m, m, False


def metric_code(field, v):
    """The metric's value coded on the label's scale (classification), or None: off the scale."""
    t, x = v
    if FIELDS[field] == "binary":
        return x if t == "b" or (t == "n" and x in (0, 1)) else None
    if FIELDS[field] == "category":
        return float(TOPICS.index(x)) if t == "t" and x in TOPICS else None
    return float(QUALITY.index(x)) if t == "n" and x in QUALITY else None


def headline_value(stat, x, y, k, positive):
    if stat == "kappa":
        return ref.quiet(skm.cohen_kappa_score, y, x)
    if stat == "weighted_kappa":
        return ref.quiet(skm.cohen_kappa_score, y, x, weights="quadratic", labels=list(range(k)))
    if stat == "auroc":
        return ref.quiet(skm.roc_auc_score, np.asarray(y) == positive, x)
    return ref.quiet(lambda: sps.spearmanr(x, y)[0]) if len(x) >= 2 else None


def check_entry(got, entry, keys, values, labels, annotator_order, tag):
    metric, field, kind, head, positive = entry
    classify, score = kind == "classification", kind == "score_vs_binary"
    check(got["kind"] == kind and got["headline"] == head, f"{tag}: kind {got['kind']}/{got['headline']}")
    left = Counter()
    x, y, ids = [], [], []
    for key, v, labs in zip(keys, values, labels):
        c = consensus(field, [code for _, code in labs.get(field, [])])
        if c is None:
            left["unlabelled"] += 1
        elif v[0] in ("missing", "tie"):
            left["metric_" + v[0]] += 1
        elif classify and metric_code(field, v) is None:
            left["off_scale"] += 1
        elif (classify or score) and c[2]:
            left["tie"] += 1  # no majority (binary, category) or a mean halfway between two points (ordinal)
        else:
            x.append(metric_code(field, v) if classify else v[1])
            y.append(c[0] if classify or score else c[1])
            ids.append(key)
    check(got["n"] == len(x), f"{tag}: n {got['n']} != {len(x)}")
    for what in ("metric_missing", "metric_tie", "unlabelled", "tie", "off_scale"):
        check(got["left_out"][what] == left[what], f"{tag}: left_out.{what} {got['left_out'][what]} != {left[what]}")
    s = got["stats"]
    x, y = np.array(x), np.array(y)
    if classify:
        k = len(QUALITY) if field == "quality" else len(TOPICS) if field == "topic" else 2
        n = len(x)
        matrix = skm.confusion_matrix(x, y, labels=list(range(k))).tolist()  # rows: the metric; columns: the label
        check(got["confusion"] == matrix, f"{tag}: confusion {got['confusion']} != {matrix}")
        cells = {}
        for a, b, key in zip(x, y, ids):
            cells.setdefault(f"{int(a)},{int(b)}", []).append(key)
        check(got["cells"] == {c: v[:200] for c, v in cells.items()}, f"{tag}: cells")
        expect_stat(s["accuracy"], skm.accuracy_score(y, x) if n else None, f"{tag} accuracy")
        expect_stat(s["balanced_accuracy"], ref.quiet(skm.balanced_accuracy_score, y, x, warn_is_nan=False)
                    if n else None, f"{tag} balanced_accuracy")
        expect_stat(s["kappa"], headline_value("kappa", x, y, k, positive), f"{tag} kappa")
        if head == "weighted_kappa":
            expect_stat(s["weighted_kappa"], headline_value(head, x, y, k, positive), f"{tag} weighted_kappa")
            xs, ys = np.array(QUALITY)[x.astype(int)], np.array(QUALITY)[y.astype(int)]
            check_correlations(s, xs, ys, tag)
        if positive is not None:
            yt, yp = y == positive, x == positive
            for name, f in (("precision", skm.precision_score), ("recall", skm.recall_score), ("f1", skm.f1_score)):
                expect_stat(s[name], ref.quiet(f, yt, yp), f"{tag} {name}")
        else:
            check("precision" not in s, f"{tag}: precision without a positive class")
    elif score:
        pos = y == positive
        two = pos.any() and (~pos).any()
        expect_stat(s["auroc"], skm.roc_auc_score(pos, x) if two else None, f"{tag} auroc")
        t = ref.best_threshold_brute(x, pos) if two else None
        check(got["threshold"] == t, f"{tag}: threshold {got['threshold']!r} != {t!r}")
        expect_stat(s["balanced_accuracy"], skm.balanced_accuracy_score(pos, x >= t) if two else None,
                    f"{tag} balanced accuracy at the threshold")
        cv = ref.cv_balanced_accuracy(x, pos, 5) if two and min(pos.sum(), (~pos).sum()) >= 5 else None
        expect_stat(s["balanced_accuracy_cv"], cv, f"{tag} balanced accuracy (5-fold)")
    else:
        check_correlations(s, x, y, tag)
    check_people(got["people"], field, kind, head, positive, labels, annotator_order, tag)


def check_correlations(s, x, y, tag):
    ok = len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0
    expect_stat(s["spearman"], ref.quiet(lambda: sps.spearmanr(x, y)[0]) if ok else None, f"{tag} spearman")
    expect_stat(s["kendall"], ref.quiet(lambda: sps.kendalltau(x, y, variant="b")[0]) if ok else None,
                f"{tag} kendall")
    expect_stat(s["pearson"], ref.quiet(lambda: sps.pearsonr(x, y)[0]) if ok else None, f"{tag} pearson")


def check_people(got, field, kind, head, positive, labels, annotator_order, tag):
    """Each annotator against the consensus of the others, in the entry's headline statistic."""
    who = {a for labs in labels for a, _ in labs.get(field, [])}
    if len(who) < 2:
        return check(got is None, f"{tag}: people with fewer than two annotators")
    categorical_use = kind != "correlation"
    k = len(QUALITY) if field == "quality" else len(TOPICS) if field == "topic" else 2
    per, values = [], []
    for a in sorted(who, key=annotator_order.index):
        x, y = [], []
        for labs in labels:
            mine = [c for b, c in labs.get(field, []) if b == a]
            rest = consensus(field, [c for b, c in labs.get(field, []) if b != a])
            if not mine or rest is None or (categorical_use and rest[2]):
                continue
            x.append(mine[0] if categorical_use or FIELDS[field] == "number" else QUALITY[int(mine[0])])
            y.append(rest[0] if categorical_use else rest[1])
        v = headline_value(head, np.array(x), np.array(y), k, positive)
        per.append((a, v))
        if v is not None and not math.isnan(v):
            values.append(v)
    check(got is not None and got["stat"] == head and got["annotators"] == len(who), f"{tag}: people {got}")
    if got is None:
        return
    check([p["annotator"] for p in got["per_annotator"]] == [a for a, _ in per], f"{tag}: people's order")
    for p, (a, v) in zip(got["per_annotator"], per):
        expect_stat(p, v, f"{tag} people: {a} vs the rest")
    mean = sum(values) / len(values) if values else None
    check((got["mean"] is None) == (mean is None) and (mean is None or abs(got["mean"] - mean) <= TOL),
          f"{tag}: people's mean {got['mean']} != {mean}")


def check_alpha(got, labels, tag):
    level = {"binary": "nominal", "category": "nominal", "ordinal": "ordinal", "number": "interval"}
    expected_fields = set()
    for field, t in FIELDS.items():
        who = {a for labs in labels for a, _ in labs.get(field, [])}
        if len(who) < 2:
            continue
        expected_fields.add(field)
        units = [[c for _, c in labs[field]] for labs in labels if len(labs.get(field, [])) >= 2]
        a = got.get(field, {})
        check(a.get("level") == level[t] and a.get("units") == len(units) and a.get("annotators") == len(who),
              f"{tag} alpha {field}: {a}")
        expect_stat(a, ref.alpha_reference(units, level[t]), f"{tag} alpha {field}")
    check(set(got) == expected_fields, f"{tag}: alpha for {sorted(got)} != {sorted(expected_fields)}")


def check_run(evalgraph, records, rows, tag):
    with tempfile.TemporaryDirectory() as folder:
        run = write_run(folder, records, rows)
        out = subprocess.run([evalgraph, "agree", "--json", run], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return check(False, f"{tag}: evalgraph agree exited {out.returncode}: {out.stderr[-2000:]}")
    got = json.loads(out.stdout)["agreement"]
    keys = [str(key) for key, _, _ in records]
    by_key = {}
    for r in rows:
        for f in FIELDS:
            if r.get(f) is not None:
                by_key.setdefault(r["id"], {}).setdefault(f, []).append((r["rater"], code_of(f, r[f])))
    labels = [by_key.get(k, {}) for k in keys]
    annotator_order = list(dict.fromkeys(r["rater"] for r in rows))  # ids by first appearance in the file
    file_keys = {r["id"] for r in rows}
    lab = got["labels"]
    expected = {"records": len(keys), "labelled": sum(1 for l in labels if l),
                "unlabelled": sum(1 for l in labels if not l), "unknown_keys": len(file_keys - set(keys)),
                "annotators": annotator_order}
    for what, v in expected.items():
        check(lab[what] == v, f"{tag}: labels.{what} {lab[what]} != {v}")
    check(len(got["entries"]) == len(ENTRIES), f"{tag}: {len(got['entries'])} entries")
    for entry, e in zip(ENTRIES, got["entries"]):
        check((e["metric"], e["label"]) == entry[:2], f"{tag}: entry {e['metric']}~{e['label']} out of order")
        values = [metric_value(reps, entry[0].split(".")[1]) for _, reps, _ in records]
        check_entry(e, entry, keys, values, labels, annotator_order, f"{tag} {entry[0]}~{entry[1]}")
    check_alpha(got["alpha"], labels, tag)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for seed in (1, 2, 3, 4, 2026):
        rng = np.random.RandomState(seed)
        check_run(sys.argv[1], *make_run(rng, single=False), f"seed {seed}")
    check_run(sys.argv[1], *make_run(np.random.RandomState(7), single=True), "one class")
    ref.report_and_exit(failures, checked)


if __name__ == "__main__":
    main()
