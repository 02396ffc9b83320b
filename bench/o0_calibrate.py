#!/usr/bin/env python3
"""The grid behind O0's calibration (plugins/shared/ksodi_measures/include/ksodi_measures/o0_calibration.hpp).

Recomputes O0 = clip(alpha*A_ret + beta*T - gamma*U, 0, 1) exactly as ksodi.o0 does, from the per-sentence audit
it stores (align, exact_missing, markers), for each tau and weight ratio (beta = gamma, the seed's ratio), and
prints the AUROC against the labels. AUROC does not depend on the scale of the weights, only on their ratios and on
the clip (values clipped to 0 tie): alpha = 1 sets the scale (a fully supported answer without markers reaches 1).

The rule that picks the calibration, printed at the end: beta = gamma = 0.2, the seed's start values kept on
O0's 0-1 scale (alpha = 1), and tau = the best of the grid at that ratio. Printed beside it, for comparison, the
rule of the previous calibration: the largest gamma/alpha whose AUROC stays within 0.005 of A_ret's alone.
  o0_calibrate.py DETAILED_JSONL [--node o0]
"""
import argparse, json, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validity_stats import auroc, FAITHFUL, UNFAITHFUL

RATIOS = [0.0, 0.1, 0.15, 0.2, 0.25, 1 / 3, 0.5, 1.0]
TAUS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
TOLERANCE = 0.005
SEED_RATIO = 0.2


def o0_auroc(units, tau, g):
    pos, neg = [], []
    for label, A, T, n, sents in units:
        unsup = sum(1 for al, ex, mk in sents if al is not None and (al < tau or ex) and not mk)
        U = unsup / n if n else 0.0
        o0 = min(1.0, max(0.0, A + g * T - g * U))  # alpha = 1, beta = gamma
        (pos if label else neg).append(o0)
    return auroc(pos, neg)


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
    a_ret = auroc([u[1] for u in units if u[0]], [u[1] for u in units if not u[0]])
    print(f"{len(units)} labelled units; A_ret alone: AUROC {a_ret:.4f}")
    print("AUROC of O0 = clip(A_ret + g*T - g*U) by tau (rows) and g = gamma/alpha = beta/alpha (columns)")
    print("tau   " + " ".join(f"{g:>6.3f}" for g in RATIOS))
    grid = {}
    for tau in TAUS:
        grid[tau] = [o0_auroc(units, tau, g) for g in RATIOS]
        print(f"{tau:<5} " + " ".join(f"{v:6.4f}" for v in grid[tau]))
    col = RATIOS.index(SEED_RATIO)
    best = max(TAUS, key=lambda t: grid[t][col])
    print(f"rule: gamma/alpha = beta/alpha = {SEED_RATIO} (the seed's 0.2 with alpha = 1), tau = the best at that "
          f"ratio -> tau {best}, AUROC {grid[best][col]:.4f}")
    ok = [g for g, v in zip(RATIOS, grid[0.5]) if v >= a_ret - TOLERANCE]
    print(f"(previous rule: tau 0.5, the largest ratio within {TOLERANCE} of A_ret alone -> {max(ok):.3f})")


if __name__ == "__main__":
    sys.exit(main())
