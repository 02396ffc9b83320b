#!/usr/bin/env python3
"""The grid behind O0's calibration (plugins/operators/ksodi_o0/o0_calibration.hpp).

Recomputes O0 = clip(alpha*A_ret + beta*T - gamma*U) from the per-sentence audit that ksodi.o0 stores (align,
exact_missing, markers) for each tau and weight ratio, and prints the AUROC against the labels. AUROC does not
depend on the scale of the weights, only on their ratios; alpha sets the scale (a fully supported answer without
markers reaches O0 = alpha).
  o0_calibrate.py DETAILED_JSONL [--node o0]
"""
import argparse, json, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validity_stats import auroc, FAITHFUL, UNFAITHFUL


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("detailed")
    ap.add_argument("--node", default="o0")
    a = ap.parse_args()
    units = []
    for line in open(a.detailed, encoding="utf-8"):
        r = json.loads(line)
        l = r.get("label", "").lower()
        label = 1 if l in FAITHFUL else 0 if l in UNFAITHFUL else None
        o = r.get(a.node) or {}
        if label is None or not o.get("computed"):
            continue
        sents = [(s["align"], bool(s.get("exact_missing")), s["markers"] > 0) for s in o["sentences"]]
        units.append((label, o["A_ret"], o["T"], len(o["sentences"]), sents))
    print(f"{len(units)} labelled units; AUROC of O0 by tau (rows) and gamma/alpha (columns), beta/alpha = 1/3")
    ratios = [0.0, 0.1, 0.2, 0.33, 0.5, 1.0]
    print("tau   " + " ".join(f"{g:>6}" for g in ratios))
    for tau in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]:
        row = []
        for g in ratios:
            pos, neg = [], []
            for label, A, T, n, sents in units:
                unsup = sum(1 for al, ex, mk in sents if al is not None and (al < tau or ex) and not mk)
                U = unsup / n if n else 0.0
                o0 = A + T / 3 - g * U  # alpha = 1 (scale-free)
                (pos if label else neg).append(o0)
            row.append(auroc(pos, neg))
        print(f"{tau:<5} " + " ".join(f"{v:6.3f}" for v in row))


if __name__ == "__main__":
    sys.exit(main())
