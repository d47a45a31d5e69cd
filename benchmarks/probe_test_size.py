"""Size of the probe's benchmark test at K twins per item, on skewed and heavy-tailed exchangeable nulls.

Under the null the model treats the original like its twins: an item's original and its K twins are
exchangeable draws. Any p at or below the level is then a false positive. Each cell draws ``--sims`` null
benchmarks of n items and tests them with the shipped role-permutation test (zcp_core.stats.ktwins):

* Acc at accuracies 0.02, 0.5 and 0.9: each item's accuracy is drawn from a Beta with that mean
  (concentration 4, so items differ in difficulty), and its K + 1 answers are right independently at it;
  the exact lattice p (at K = 1 the exact McNemar test).
* P_all from Beta(5, 0.5); log-normal (log P = mu_i + 0.7 z, mu_i ~ N(-2, 1), capped at P = 1); heavy-tailed
  (log P = mu_i + 0.5 t3, capped at P = 1): Monte Carlo p with ``--resamples`` role draws,
  ``(1 + #{T* >= T}) / (B + 1)`` (the product draws 10,000; the +1 makes it valid at any B). Every sim
  draws its own roles.

The old test (sign flips of original minus the twins' mean) is run beside it on the P_all nulls at
n = 80, as the baseline this replaces. Each rate gets a Clopper-Pearson interval at the Bonferroni
width over every rate in the table. Writes benchmarks/results/probe_test_size.md.

    .venv/bin/python benchmarks/probe_test_size.py [--sims 4000] [--resamples 999]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from zcp_core.stats import ktwins as kt
from zcp_core.stats import sign_flip_pvalues

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402

KS = (1, 2, 4, 8)
NS = (20, 80, 700)
LEVELS = (0.05, 0.01)
OUT = ROOT / "benchmarks" / "results" / "probe_test_size.md"


def _acc(mean: float):
    def draw(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
        p = rng.beta(4 * mean, 4 * (1 - mean), n)
        return (rng.random((n, k + 1)) < p[:, None]).astype(float)
    return draw


def _beta(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return rng.beta(5, 0.5, (n, k + 1))


def _lognormal(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return np.minimum(np.exp(rng.normal(-2, 1, n)[:, None] + 0.7 * rng.standard_normal((n, k + 1))), 1.0)


def _t3(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    return np.minimum(np.exp(rng.normal(-2, 1, n)[:, None] + 0.5 * rng.standard_t(3, (n, k + 1))), 1.0)


MODELS = {"Acc, accuracy 0.02": ("binary", _acc(0.02)), "Acc, accuracy 0.5": ("binary", _acc(0.5)),
          "Acc, accuracy 0.9": ("binary", _acc(0.9)), "P_all, Beta(5, 0.5)": ("continuous", _beta),
          "P_all, log-normal": ("continuous", _lognormal), "P_all, t3 on log P": ("continuous", _t3)}


def cell_pvalues(kind: str, draw, n: int, k: int, sims: int, resamples: int, seed: int) -> np.ndarray:
    """p-values of ``sims`` null benchmarks of ``n`` items with ``k`` twins each (the shipped test)."""
    rng = np.random.default_rng(seed)
    out = np.empty(sims)
    for s in range(sims):
        x = draw(rng, n, k)
        if kind == "binary":
            out[s] = math.exp(kt.lattice_log_p(x[:, 0].tolist(), x[:, 1:].tolist()))
        else:
            null = kt.role_null(x[:, 0].tolist(), x[:, 1:].tolist())
            out[s] = kt.role_p(null, kt.role_draws(null, resamples, seed * 100_003 + s, extend_floor=False))
    return out


def old_pvalues(draw, n: int, k: int, sims: int, resamples: int, seed: int) -> np.ndarray:
    """The replaced test: sign flips of original minus the twins' mean."""
    rng = np.random.default_rng(seed)
    d = np.stack([(lambda x: x[:, 0] - x[:, 1:].mean(axis=1))(draw(rng, n, k)) for _ in range(sims)])
    return np.asarray(sign_flip_pvalues(d, resamples, seed, extend_floor=False))


def clopper_pearson(hits: int, total: int, conf: float) -> tuple[float, float]:
    """Exact binomial interval at confidence ``conf``."""
    from scipy.stats import beta

    a = 1 - conf
    lo = 0.0 if hits == 0 else float(beta.ppf(a / 2, hits, total - hits + 1))
    hi = 1.0 if hits == total else float(beta.ppf(1 - a / 2, hits + 1, total - hits))
    return lo, hi


def main() -> None:
    """Simulate every cell and write the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=4000, help="null benchmarks per cell")
    ap.add_argument("--resamples", type=int, default=999, help="role draws per Monte Carlo p")
    args = ap.parse_args()
    t0 = time.time()
    cells, old = [], []
    for mi, (name, (kind, draw)) in enumerate(MODELS.items()):
        for k in KS:
            for n in NS:
                p = cell_pvalues(kind, draw, n, k, args.sims, args.resamples, seed=1000 * mi + 10 * k + n)
                cells.append((name, k, n, p))
                print(f"{name} K={k} n={n}: {(p <= 0.05).mean():.4f} {(p <= 0.01).mean():.4f} "
                      f"({time.time() - t0:.0f} s)", flush=True)
                if kind == "continuous" and n == 80:
                    old.append((name, k, n, old_pvalues(draw, n, k, args.sims, args.resamples, seed=7 + k)))
    n_rates = 2 * (len(cells) + len(old))
    conf = 1 - 0.05 / n_rates
    lines = [header("Size of the benchmark test at K twins per item (skewed and heavy-tailed nulls)",
                    f"numpy {np.__version__}; zcp_core.stats.ktwins (role permutation; exact lattice for Acc)"),
             "",
             f"Rejection rate of the shipped test under an exchangeable null (original and its K twins drawn alike), "
             f"{args.sims} null benchmarks a cell; P_all cells use {args.resamples} role draws per p. Each rate's "
             f"interval is Clopper-Pearson at {100 * conf:.3f}% (Bonferroni over the table's {n_rates} rates), so "
             "the whole table holds at 95%. **held** means the interval holds the nominal level or lies below it.",
             "", f"Wall time: {time.time() - t0:.0f} s on 2 shared cores.", "",
             "| null | K | n | p <= 0.05 | interval | p <= 0.01 | interval | held |", "|---|---|---|---|---|---|---|---|"]
    missed = []
    for name, k, n, p in cells:
        row, ok = [], True
        for lvl in LEVELS:
            h = int((p <= lvl).sum())
            lo, hi = clopper_pearson(h, p.size, conf)
            ok &= lo <= lvl
            row += [f"{h / p.size:.4f}", f"[{lo:.4f}, {hi:.4f}]"]
        missed += [] if ok else [f"{name}, K = {k}, n = {n}"]
        lines.append(f"| {name} | {k} | {n} | " + " | ".join(row) + f" | {'held' if ok else 'MISSED'} |")
    lines += ["", f"Cells held: {len(cells) - len(missed)} of {len(cells)}."
              + (f" Missed: {'; '.join(missed)}." if missed else ""), "",
              "## Baseline: the replaced test (sign flips of original minus the twins' mean), n = 80", "",
              "At K = 1 the two tests are the same test. At K >= 2 the difference is not symmetric about 0 under "
              "the null, so its sign flips are not a symmetry of the null.", "",
              "| null | K | p <= 0.05 | interval | p <= 0.01 | interval |", "|---|---|---|---|---|---|"]
    for name, k, _n, p in old:
        row = []
        for lvl in LEVELS:
            h = int((p <= lvl).sum())
            lo, hi = clopper_pearson(h, p.size, conf)
            row += [f"{h / p.size:.4f}", f"[{lo:.4f}, {hi:.4f}]"]
        lines.append(f"| {name} | {k} | " + " | ".join(row) + " |")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
