#!/usr/bin/python3
"""Every agreement statistic of engine/stats against an independent computation (issue #36).

Random data (ties, missing labels, a single class, small n, several seeds) go to agreement_stats_driver as JSON;
each point value is compared with scipy / scikit-learn, Krippendorff's alpha with a coincidence-matrix
implementation written here from its definition (and with Krippendorff's own worked example), and the analytic
intervals (Wilson, Fisher z, Fleiss-Cohen-Everitt, DeLong from its O(n^2) definition) with formulas written
here, all to 1e-9. Bootstrap intervals are checked for what can be known without the same generator: they hold
the value, lie in the statistic's range and are the same on a second run. Where scipy or scikit-learn says a
statistic is not defined (nan, a warning, an error), the engine must say "not defined" with a reason.

usage: agreement_reference.py DRIVER     (exit 77 when scipy or scikit-learn is missing: ctest's skip)
"""
import json
import math
import subprocess
import sys
import warnings

try:
    import numpy as np
    from scipy import stats as sps
    from sklearn import metrics as skm
except ImportError as e:  # the check needs them; without them it is skipped, not passed
    print(f"SKIP: {e} (install python3-scipy and python3-sklearn)")
    sys.exit(77)

TOL = 1e-9
LEVEL = 0.95
Z = sps.norm.ppf(0.5 + LEVEL / 2)
failures = []
checked = 0


def check(ok, what):
    global checked
    checked += 1
    if not ok:
        failures.append(what)


def close(a, b):
    return abs(a - b) <= TOL


def compare_value(stat, expected, what):
    """expected None: the reference says it is not defined."""
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        check(not stat["defined"] and stat["why"], f"{what}: expected 'not defined', got {stat}")
        return False
    check(stat["defined"], f"{what}: expected {expected}, got not defined ({stat['why']})")
    if stat["defined"]:
        check(close(stat["value"], expected), f"{what}: {stat['value']!r} != reference {expected!r}")
    return stat["defined"]


def compare_interval(stat, low, high, what, via_variance=False):
    """via_variance: a symmetric interval v ± z·sqrt(var) may also agree in var: a variance that is 0 up to
    rounding (1e-17) is 0 in one and 1e-8 after the square root in the other; the squares agree to 1e-15."""
    if not stat["defined"]:
        return
    if via_variance:
        half, ref_half = stat["high"] - stat["value"], high - stat["value"]
        if abs(half * half - ref_half * ref_half) <= 1e-15 and close(stat["high"] - half, stat["low"]):
            check(True, what)
            return
    check(close(stat["low"], low) and close(stat["high"], high),
          f"{what}: interval [{stat['low']!r}, {stat['high']!r}] != reference [{low!r}, {high!r}]")


def sane(stat, lo, hi, what):
    """Every number finite, the interval around the value and inside [lo, hi]."""
    if not stat["defined"]:
        check(bool(stat["why"]), f"{what}: not defined without a reason")
        return
    v, a, b = stat["value"], stat["low"], stat["high"]
    check(all(math.isfinite(t) for t in (v, a, b)), f"{what}: not finite {stat}")
    check(lo - TOL <= a <= v + TOL and v - TOL <= b <= hi + TOL, f"{what}: interval out of order/range {stat}")
    check(bool(stat["method"]), f"{what}: no method")


def quiet(f, *args, warn_is_nan=True, **kw):
    """f's result, or nan where it raises or (warn_is_nan) warns that it is ill-defined."""
    with warnings.catch_warnings():
        warnings.simplefilter("error" if warn_is_nan else "ignore")
        try:
            return float(f(*args, **kw))
        except (ValueError, ZeroDivisionError, RuntimeWarning, Warning):
            return float("nan")


# ---- references written here ----

def wilson(k, n):
    ph = k / n
    centre = (ph + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(ph * (1 - ph) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def fce_kappa(c, weights):
    """Fleiss, Cohen & Everitt (1969): kappa with agreement weights and its non-null asymptotic variance."""
    c = np.asarray(c, dtype=float)
    n = c.sum()
    p = c / n
    pr, pc = p.sum(axis=1), p.sum(axis=0)
    po = (weights * p).sum()
    pe = (weights * np.outer(pr, pc)).sum()
    if pe >= 1:
        return None
    kappa = (po - pe) / (1 - pe)
    wr = weights @ pc  # w̄_i.
    wc = pr @ weights  # w̄_.j
    dev = weights - (wr[:, None] + wc[None, :]) * (1 - kappa)
    var = ((p * dev ** 2).sum() - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2)
    half = Z * math.sqrt(max(var, 0.0))
    return kappa, max(-1.0, kappa - half), min(1.0, kappa + half)


def delong(score, y):
    """AUROC and its DeLong interval from the O(m n) definition, on the logit scale."""
    x, w = score[y], score[~y]
    psi = (x[:, None] > w[None, :]) + 0.5 * (x[:, None] == w[None, :])
    auc = psi.mean()
    m, n = len(x), len(w)
    if m < 2 or n < 2:
        return auc, auc, auc
    var = psi.mean(axis=1).var(ddof=1) / m + psi.mean(axis=0).var(ddof=1) / n
    if auc <= 0 or auc >= 1 or var <= 0:
        return auc, auc, auc
    logit, half = math.log(auc / (1 - auc)), Z * math.sqrt(var) / (auc * (1 - auc))
    expit = lambda t: 1 / (1 + math.exp(-t))
    return auc, expit(logit - half), expit(logit + half)


def fisher(r, n, variance_numerator, offset):
    if n <= offset or abs(r) >= 1:
        return r, r
    z, half = math.atanh(r), Z * math.sqrt(variance_numerator / (n - offset))
    return math.tanh(z - half), math.tanh(z + half)


class SplitMix64:
    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.s = seed & self.MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & self.MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def below(self, n):
        k = int(float(self.next() >> 11) * 2.0 ** -53 * float(n))
        return min(k, n - 1)


SEED = 20261129


def best_threshold_brute(score, y):
    """Every candidate tried: the lowest score, then midpoints between neighbouring distinct scores."""
    distinct = sorted(set(score.tolist()))
    candidates = [distinct[0]]
    for a, b in zip(distinct, distinct[1:]):
        t = a / 2 + b / 2
        candidates.append(t if t > a else b)
    pos, neg = int(y.sum()), int((~y).sum())
    best, best_t = -1, None
    for t in candidates:
        pred = score >= t
        crit = int((pred & y).sum()) * neg + int((~pred & ~y).sum()) * pos
        if crit > best:
            best, best_t = crit, t
    return best_t


def cv_balanced_accuracy(score, y, folds):
    rng = SplitMix64(SEED)
    fold = np.zeros(len(y), dtype=int)
    for cls in (True, False):
        members = [i for i in range(len(y)) if bool(y[i]) == cls]
        for i in range(len(members) - 1, 0, -1):
            j = rng.below(i + 1)
            members[i], members[j] = members[j], members[i]
        for p, i in enumerate(members):
            fold[i] = p % folds
    pred = np.zeros(len(y), dtype=bool)
    for f in range(folds):
        train = fold != f
        t = best_threshold_brute(score[train], y[train])
        pred[fold == f] = score[fold == f] >= t
    return skm.balanced_accuracy_score(y, pred)


def alpha_reference(units, level):
    """Krippendorff (2011): the coincidence matrix, its marginals and the metric's delta², as defined."""
    pairable = [u for u in units if len(u) >= 2]
    values = sorted({v for u in pairable for v in u})
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in pairable:
        for i, a in enumerate(u):
            for j, b in enumerate(u):
                if i != j:
                    o[index[a], index[b]] += 1 / (len(u) - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    if n < 2:
        return None
    delta = np.zeros_like(o)
    for c in range(len(values)):
        for k in range(len(values)):
            if level == "nominal":
                delta[c, k] = float(c != k)
            elif level == "interval":
                delta[c, k] = (values[c] - values[k]) ** 2
            else:
                lo, hi = min(c, k), max(c, k)
                delta[c, k] = (nc[lo:hi + 1].sum() - (nc[c] + nc[k]) / 2) ** 2
    expected = (np.outer(nc, nc) * delta).sum()
    if expected == 0:
        return None
    return 1 - (n - 1) * (o * delta).sum() / expected


# ---- the cases ----

def classification_cases(rng):
    cases = []
    for n in (0, 1, 2, 3, 7, 40, 300):
        for k in (2, 3, 5):
            label = rng.randint(0, k, n)
            metric = np.where(rng.rand(n) < 0.6, label, rng.randint(0, k, n))
            cases.append((metric, label, k))
    n = 30
    cases.append((np.zeros(n, int), np.zeros(n, int), 2))       # one class in both: kappa not defined
    cases.append((rng.randint(0, 2, n), np.zeros(n, int), 2))   # the label one class only
    cases.append((np.ones(n, int), rng.randint(0, 2, n), 2))    # the metric one class only
    cases.append((np.full(n, 2), np.full(n, 2), 4))             # one class of four, in both
    cases.append((np.array([0, 1] * 10), np.array([0, 1] * 10), 2))  # perfect
    cases.append((np.array([0, 1] * 10), np.array([1, 0] * 10), 2))  # perfectly wrong
    return [{"type": "classification", "metric": m.tolist(), "label": l.tolist(), "k": k,
             "positive": int(rng.randint(0, k))} for m, l, k in cases]


def check_classification(case, res, tag):
    m, l, k, pos = np.array(case["metric"], int), np.array(case["label"], int), case["k"], case["positive"]
    n = len(m)
    expected_matrix = [[int(((m == i) & (l == j)).sum()) for j in range(k)] for i in range(k)]
    check(res["confusion"] == expected_matrix, f"{tag}: confusion matrix")
    if compare_value(res["accuracy"], skm.accuracy_score(l, m) if n else None, f"{tag} accuracy"):
        compare_interval(res["accuracy"], *wilson(int((m == l).sum()), n), f"{tag} accuracy Wilson")
    # scikit-learn warns when the metric uses a class no label holds, and still gives the mean recall over the
    # label's classes: a number, so the engine gives it too.
    compare_value(res["balanced_accuracy"], quiet(skm.balanced_accuracy_score, l, m, warn_is_nan=False) if n else None,
                  f"{tag} balanced accuracy")
    sane(res["balanced_accuracy"], 0, 1, f"{tag} balanced accuracy")
    kappa = quiet(skm.cohen_kappa_score, l, m) if n else None
    if compare_value(res["kappa"], kappa, f"{tag} kappa"):
        ref = fce_kappa(expected_matrix, np.eye(k))
        compare_interval(res["kappa"], ref[1], ref[2], f"{tag} kappa FCE interval", via_variance=True)
    wk = quiet(skm.cohen_kappa_score, l, m, weights="quadratic", labels=list(range(k))) if n else None
    if compare_value(res["weighted_kappa"], wk, f"{tag} weighted kappa"):
        grid = np.arange(k)
        weights = 1 - (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
        ref = fce_kappa(expected_matrix, weights)
        compare_value({"defined": True, "value": ref[0], "why": ""}, res["weighted_kappa"]["value"],
                      f"{tag} weighted kappa (agreement-weight form)")
        compare_interval(res["weighted_kappa"], ref[1], ref[2], f"{tag} weighted kappa FCE interval",
                         via_variance=True)
    yt, yp = l == pos, m == pos
    tp, fp, fn = int((yt & yp).sum()), int((~yt & yp).sum()), int((yt & ~yp).sum())
    if compare_value(res["precision"], quiet(skm.precision_score, yt, yp) if tp + fp else None, f"{tag} precision"):
        compare_interval(res["precision"], *wilson(tp, tp + fp), f"{tag} precision Wilson")
    if compare_value(res["recall"], quiet(skm.recall_score, yt, yp) if tp + fn else None, f"{tag} recall"):
        compare_interval(res["recall"], *wilson(tp, tp + fn), f"{tag} recall Wilson")
    compare_value(res["f1"], quiet(skm.f1_score, yt, yp), f"{tag} f1")
    for name in ("accuracy", "precision", "recall", "f1"):
        sane(res[name], 0, 1, f"{tag} {name}")
    for name in ("kappa", "weighted_kappa"):
        sane(res[name], -1, 1, f"{tag} {name}")


def score_cases(rng):
    cases = []
    for n in (1, 2, 3, 6, 11, 25, 60, 200):
        y = rng.rand(n) < 0.4
        score = rng.randn(n) + y * 1.2
        cases.append((np.round(score, 1), y))  # ties
        cases.append((score, y))
    cases.append((rng.randn(20), np.zeros(20, bool)))            # one class
    cases.append((rng.randn(20), np.ones(20, bool)))
    cases.append((np.full(12, 0.5), np.array([True, False] * 6)))  # every score tied
    cases.append((np.arange(10.0), np.arange(10) >= 5))           # separated: AUROC 1
    cases.append((np.arange(10.0), np.arange(10) < 5))            # AUROC 0
    cases.append((rng.randn(9), np.array([True] + [False] * 8)))   # one positive: no DeLong interval
    return [{"type": "score", "score": s.tolist(), "positive": y.tolist(), "folds": 5} for s, y in cases]


def check_score(case, res, tag):
    s, y = np.array(case["score"]), np.array(case["positive"], bool)
    two = y.any() and (~y).any()
    if compare_value(res["auroc"], skm.roc_auc_score(y, s) if two else None, f"{tag} auroc"):
        if len(s) <= 400:
            auc, lo, hi = delong(s, y)
            compare_value(res["auroc"], auc, f"{tag} auroc (O(n^2) definition)")
            compare_interval(res["auroc"], lo, hi, f"{tag} DeLong interval")
    sane(res["auroc"], 0, 1, f"{tag} auroc")
    if not two:
        check(not res["balanced_accuracy_in_sample"]["defined"] and not res["balanced_accuracy_cv"]["defined"],
              f"{tag}: threshold defined with one class")
        return
    t = best_threshold_brute(s, y)
    check(res["threshold"] == t, f"{tag}: threshold {res['threshold']!r} != reference {t!r}")
    compare_value(res["balanced_accuracy_in_sample"], skm.balanced_accuracy_score(y, s >= t), f"{tag} BA in sample")
    folds = case["folds"]
    cv = cv_balanced_accuracy(s, y, folds) if min(y.sum(), (~y).sum()) >= folds else None
    compare_value(res["balanced_accuracy_cv"], cv, f"{tag} BA cross-validated")
    sane(res["balanced_accuracy_in_sample"], 0, 1, f"{tag} BA in sample")
    sane(res["balanced_accuracy_cv"], 0, 1, f"{tag} BA cross-validated")


def correlation_cases(rng):
    cases = []
    for n in (0, 1, 2, 3, 4, 5, 8, 30, 500):
        x = rng.randn(n)
        y = 0.5 * x + rng.randn(n)
        cases.append((x, y))
        cases.append((np.round(x * 2), np.round(y)))  # many ties
    cases.append((np.ones(10), rng.randn(10)))        # constant
    cases.append((rng.randn(10), np.full(10, 3.0)))
    cases.append((np.arange(8.0), np.arange(8.0) * 2))  # r = 1
    cases.append((np.arange(8.0), -np.arange(8.0)))     # r = -1
    return [{"type": "correlation", "x": x.tolist(), "y": y.tolist()} for x, y in cases]


def check_correlation(case, res, tag):
    x, y = np.array(case["x"]), np.array(case["y"])
    n = len(x)
    if n:
        check(np.allclose(res["ranks_x"], sps.rankdata(x), rtol=0, atol=TOL), f"{tag}: ranks != rankdata")
    ok = n >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0
    r = quiet(lambda: sps.pearsonr(x, y)[0]) if ok else None
    if compare_value(res["pearson"], r, f"{tag} pearson"):
        compare_interval(res["pearson"], *fisher(res["pearson"]["value"], n, 1.0, 3), f"{tag} pearson Fisher z")
    rho = quiet(lambda: sps.spearmanr(x, y)[0]) if ok else None
    if compare_value(res["spearman"], rho, f"{tag} spearman"):
        compare_interval(res["spearman"], *fisher(res["spearman"]["value"], n, 1.06, 3), f"{tag} spearman Fisher z")
    tau = quiet(lambda: sps.kendalltau(x, y, variant="b")[0]) if ok else None
    if compare_value(res["kendall"], tau, f"{tag} kendall"):
        compare_interval(res["kendall"], *fisher(res["kendall"]["value"], n, 0.437, 4), f"{tag} kendall Fisher z")
    for name in ("pearson", "spearman", "kendall"):
        sane(res[name], -1, 1, f"{tag} {name}")


KRIPPENDORFF_2011 = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
                     [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]


def alpha_cases(rng):
    cases = [KRIPPENDORFF_2011, [], [[1]], [[2], [3]], [[4, 4], [4, 4, 4], [4]]]
    for units in (1, 3, 10, 40, 150):
        for coders in (2, 3, 5):
            scale = rng.randint(0, 5, size=units)[:, None] + rng.randint(-1, 2, size=(units, coders))
            present = rng.rand(units, coders) > 0.3
            cases.append([[int(v) for v, p in zip(row, keep) if p] for row, keep in zip(scale, present)])
            cont = np.round(rng.randn(units)[:, None] + 0.5 * rng.randn(units, coders), 2)
            cases.append([[float(v) for v, p in zip(row, keep) if p] for row, keep in zip(cont, present)])
    return [{"type": "alpha", "units": u} for u in cases]


def check_alpha(case, res, tag):
    for level in ("nominal", "ordinal", "interval"):
        compare_value(res[level], alpha_reference(case["units"], level), f"{tag} alpha {level}")
        sane(res[level], -math.inf, 1, f"{tag} alpha {level}")
    if case["units"] == KRIPPENDORFF_2011:
        published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
        for level, value in published.items():
            check(round(res[level]["value"], 3) == value,
                  f"Krippendorff (2011) {level}: {res[level]['value']} does not round to {value}")


def run_driver(driver, cases):
    out = subprocess.run([driver], input=json.dumps({"cases": cases, "level": LEVEL}), capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        print(out.stderr)
        sys.exit(f"driver failed with exit code {out.returncode}")
    return json.loads(out.stdout)["results"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    driver = sys.argv[1]
    checkers = {"classification": check_classification, "score": check_score, "correlation": check_correlation,
                "alpha": check_alpha}
    for seed in (1, 2, 3, 2026):
        rng = np.random.RandomState(seed)
        cases = classification_cases(rng) + score_cases(rng) + correlation_cases(rng) + alpha_cases(rng)
        results = run_driver(driver, cases)
        check(results == run_driver(driver, cases), f"seed {seed}: a second run gives other figures")
        for i, (case, res) in enumerate(zip(cases, results)):
            checkers[case["type"]](case, res, f"seed {seed} case {i} ({case['type']})")
    report_and_exit(failures, checked)


def report_and_exit(failed, count):
    """Prints the first 40 failures and the tally; exits 1 when anything failed (also agree_end_to_end.py's end)."""
    for f in failed[:40]:
        print("FAIL:", f)
    print(f"{count} checks, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
