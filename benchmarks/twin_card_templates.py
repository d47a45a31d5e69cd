"""The twin card of program templates: MATH-500 (``--method template``) or GSM8K (``--method auto``).

Builds the seed-0 twins with ``zcp reference build --json`` (the card's neutral prior from the embedded model) and
writes coverage (per subject on MATH-500; per method under ``auto``), the failure kinds, and the balance targets on
numeric answers, each with its CI: |mean log ratio| <= 0.03, roundness rates within 3 points, |neutral prior
difference| <= 0.05 nats. These are point targets; at this n the intervals are wider than the bands. The seed is
fixed; a miss is a finding, never a reason to reseed.

    .venv/bin/python benchmarks/twin_card_templates.py                                   # -> twin_card_math500.md
    .venv/bin/python benchmarks/twin_card_templates.py --dataset data/gsm8k/test.jsonl --method auto
                                                                                         # -> twin_card_gsm8k_auto.md
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import header  # noqa: E402
from twin_probe_common import ROOT, Clock, zcp  # noqa: E402

SEED = 0


def _paired_ci(diffs: list[float]) -> tuple[float, float, float]:
    from scipy import stats

    m = statistics.fmean(diffs)
    if len(diffs) < 2:
        return m, m, m
    h = float(stats.t.ppf(0.975, len(diffs) - 1)) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return m, m - h, m + h


def _roundness_rows(originals: dict, twins: list[dict]) -> list[tuple[str, str, str, bool]]:
    from zcp_core.reference.card import answer_value as _value
    from zcp_core.reference.draw import roundness

    pairs = [(a, b) for t in twins if (a := _value(originals[t["original_id"]].answer)) is not None
             and (b := _value(t["answer"])) is not None]
    rows = []
    for k, name in ((0, "trailing_zero_rate"), (1, "multiple_of_5_rate")):
        d = [float(roundness(b)[k]) - float(roundness(a)[k]) for a, b in pairs]
        m, lo, hi = _paired_ci(d) if d else (0.0, 0.0, 0.0)
        rows.append((name, f"twin minus original {m:+.4f} (95% CI [{lo:+.4f}, {hi:+.4f}]) over {len(d)} pairs",
                     "within 3 points", abs(m) <= 0.03))
    return rows


def _targets(card: dict, originals: dict, twins: list[dict]) -> list[tuple[str, str, str, bool]]:
    from zcp_core.probe.calibrate import PRIOR_BAND  # the band `zcp probe --calibrate auto` reads the card by

    if card.get("too_few_pairs"):
        return [("pairs", str(card["n_pairs"]), "at least 10 for a card", False)]
    lr, np90 = card["log_ratio_ci"], card["neutral_prior_ci90"] or [float("nan")] * 2
    npd = card["neutral_prior_diff"] if card["neutral_prior_diff"] is not None else float("nan")
    return [
        ("log_ratio_mean", f"{card['log_ratio_mean']:+.4f} (95% CI [{lr[0]:+.4f}, {lr[1]:+.4f}])", "|mean| <= 0.03",
         abs(card["log_ratio_mean"]) <= 0.03),
        *_roundness_rows(originals, twins),
        ("neutral_prior_diff", f"{npd:+.4f} nats (90% CI [{np90[0]:+.4f}, {np90[1]:+.4f}])",
         f"|mean| <= {PRIOR_BAND}", abs(npd) <= PRIOR_BAND),
        ("larger_share", f"{card['larger_share']:.4f} over {card['n_pairs']} pairs", "reported", True),
    ]


def main() -> int:
    from zcp_core.data import load_items

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="data/math500/test.jsonl")
    ap.add_argument("--method", choices=["template", "auto"], default="template")
    ap.add_argument("--out", default=None, help="run folder (default runs/bench-twin-card-<dataset>[-auto])")
    ap.add_argument("--result", default=None)
    args = ap.parse_args()
    name = Path(args.dataset).parent.name
    tag = name + ("_auto" if args.method == "auto" else "")
    args.out = args.out or f"runs/bench-twin-card-{tag.replace('_', '-')}"
    args.result = args.result or str(ROOT / "benchmarks" / "results" / f"twin_card_{tag}.md")
    clock = Clock()
    build = json.loads(zcp("reference", "build", "--method", args.method, "--dataset", args.dataset, "--seed",
                           str(SEED), "--out", args.out, "--json"))
    wall = clock()
    card, n, ok = build["twin_card"], build["n"], build["traced"]
    twins = [json.loads(x) for x in (Path(args.out) / "reference.jsonl").read_text().splitlines() if x]
    items = load_items(ROOT / args.dataset)
    originals = {it.id: it for it in items}
    body = [f"Twins: `zcp reference build --method {args.method} --dataset {args.dataset} --seed {SEED} --json` "
            f"(neutral prior: embedded SmolLM2), {ok} of {n} items ({ok / n:.1%}); {wall:.0f} s wall.", ""]
    if "shares" in build:
        sh = build["shares"]
        body += [f"By method: numeric tracing {sh['numeric']} items ({sh['numeric'] / n:.1%}), templates "
                 f"{sh['template']} ({sh['template'] / n:.1%}), of {n}; the card below is over their union.", ""]
    subjects = Counter(str(it.metadata.get("subject")) for it in items if it.metadata.get("subject"))
    if subjects:
        covered = Counter(str(originals[t["original_id"]].metadata.get("subject")) for t in twins)
        body += ["## Coverage per subject", "", "| subject | items | with a twin | share | at least 15% |",
                 "|---|---|---|---|---|",
                 *[f"| {s} | {m} | {covered[s]} | {covered[s] / m:.1%} | {'yes' if covered[s] / m >= 0.15 else '**no**'} |"
                   for s, m in sorted(subjects.items(), key=lambda kv: -kv[1])], ""]
    fails = build["failures_by_kind"]
    body += ["## Balance targets on numeric answers", "", "| key | measured | target | met |", "|---|---|---|---|",
             *[f"| {k} | {v} | {t} | {'yes' if m else '**no**'} |" for k, v, t, m in _targets(card, originals, twins)],
             "",
             "## Items without a twin, per kind", "", "| kind | items |", "|---|---|",
             *[f"| {k} | {v} |" for k, v in sorted(fails.items(), key=lambda kv: -kv[1])], "",
             "## Twin card (`zcp reference build --json`, key `twin_card`)", "", "| key | value |", "|---|---|",
             *[f"| {k} | {json.dumps(v)} |" for k, v in sorted(card.items()) if k != "leading_digit_share"], ""]
    kinds = Counter("rational" if _rational(t["answer"]) is not None else "other" for t in twins)
    body += [f"Answers: {kinds['rational']} twins have a single rational answer (the card's pairs), "
             f"{kinds['other']} another form (surds, tuples, expressions).", ""]
    if kinds["other"]:
        body += _other_prior(originals, twins)
    text = header(f"Twin card of program templates, {name}" + (" (numeric tracing, else a template)"
                                                                  if args.method == "auto" else ""),
                  f"method {build['method']}, seed {SEED}, neutral prior model {card.get('neutral_prior_model')}",
                  command=None) + "\n" + "\n".join(body)
    Path(args.result).write_text(text)
    print(text)
    return 0


def _other_prior(originals: dict, twins: list[dict]) -> list[str]:
    """The neutral prior over the pairs the card leaves out (surds, tuples, expressions): reported, not a target."""
    from zcp_core.backends.spec import load_backend
    from zcp_core.reference.card import neutral_priors

    pairs = [(originals[t["original_id"]].answer, t["answer"]) for t in twins if _rational(t["answer"]) is None]
    lp = neutral_priors(load_backend("smollm2"), [x for p in pairs for x in p])
    m, lo, hi = _paired_ci([lp[a] - lp[b] for a, b in pairs])
    return [f"Neutral prior over those {len(pairs)} other pairs, original minus twin: {m:+.3f} nats (95% CI "
            f"[{lo:+.3f}, {hi:+.3f}]). Their twins keep the original's form and digit counts, yet remain a priori "
            "less likely; `zcp probe` reads template twins net of each answer's neutral prior (`p_all_net`, "
            "lab_math500.md), and scores that prior with the model it audits, over every twin.", ""]


def _rational(answer: str) -> Fraction | None:
    from zcp_core.reference.card import answer_value as _value

    return _value(answer)


if __name__ == "__main__":
    raise SystemExit(main())
