"""Size of the paired tests under a symmetric null: the share of null draws with p < 0.05 (and < 0.01).

Both arms are drawn from one skewed distribution (Beta(0.5, 2), like P_all), so each paired difference
is symmetric about 0 and any p < 0.05 is a false positive. The sign-flip permutation test (the default
for p_first / p_all) and the paired bootstrap (the option) run with the production code and defaults;
McNemar (acc, con) on two independent arms right 40% of the time. Writes
benchmarks/results/paired_test_size.md.

    .venv/bin/python benchmarks/paired_test_size.py [--draws 2000] [--bootstrap-draws 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from zcp_core.stats import mcnemar_test, paired_bootstrap_test, sign_flip_pvalues

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402

SIZES = (3, 5, 10, 30, 100)


def _mcnemar_p(orig: np.ndarray, ref: np.ndarray) -> np.ndarray:
    n = orig.shape[1]
    b, c = (orig & ~ref).sum(axis=1).tolist(), (ref & ~orig).sum(axis=1).tolist()
    cache = {bc: mcnemar_test([True] * bc[0] + [False] * bc[1] + [True] * (n - sum(bc)),
                              [False] * bc[0] + [True] * bc[1] + [True] * (n - sum(bc))).p
             for bc in set(zip(b, c))}
    return np.array([cache[bc] for bc in zip(b, c)])


def main() -> None:
    """Simulate every test at every n and write the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2000, help="null draws per n (permutation, McNemar)")
    ap.add_argument("--bootstrap-draws", type=int, default=2000, help="null draws per n for the (slow) bootstrap")
    args = ap.parse_args()
    rows = []
    for n in SIZES:
        rng = np.random.default_rng(n)
        orig, ref = rng.beta(0.5, 2.0, size=(2, args.draws, n))
        perm = sign_flip_pvalues(orig - ref)
        boot = np.array([paired_bootstrap_test(o, r).p for o, r in
                         zip(orig[: args.bootstrap_draws], ref[: args.bootstrap_draws], strict=True)])
        bo, br = rng.random((2, args.draws, n)) < 0.4
        mc = _mcnemar_p(bo, br)
        rows.append((n, perm, boot, mc))
    lines = [header("Size of the paired tests under a symmetric null",
                    f"numpy {np.__version__}; tests of zcp_core.stats (sign-flip permutation, paired bootstrap, "
                    "exact McNemar); deterministic rewording of zcp_core.reference.paraphrase"),
             "",
             f"Share of null draws with p < 0.05 (p < 0.01 in brackets); nominal 0.05 (0.01). "
             f"Permutation and McNemar: {args.draws} draws per n; bootstrap: {args.bootstrap_draws}.", "",
             "| pairs | permutation (default) | bootstrap (option) | McNemar |", "|---|---|---|---|"]
    for n, perm, boot, mc in rows:
        cell = [f"{np.mean(x < 0.05):.3f} ({np.mean(x < 0.01):.3f})" for x in (perm, boot, mc)]
        lines.append(f"| {n} | {' | '.join(cell)} |")
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks" / "results" / "paired_test_size.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
