"""The shared report layer: one formatting rule per kind of number, and the Report value's renderings."""

from __future__ import annotations

import math

from zcp_core import report as r
from zcp_core.stats import C_CAP


def test_the_ceiling_is_the_stats_ceiling() -> None:
    assert r.C_CEILING == C_CAP


def test_confidence_is_never_one_or_zero() -> None:
    assert r.fmt_c(0.9999952) == "≥ 0.999"
    assert r.fmt_c(0.999) == "≥ 0.999"
    assert r.fmt_c(0.5, bound=True) == "≥ 0.999"
    assert r.fmt_c(0.99750284) == "0.998"
    assert r.fmt_c(0.0004) == "≤ 0.001"
    assert r.fmt_c(None) == r.fmt_c(float("nan")) == "–"


def test_numbers_counts_intervals_and_missing() -> None:
    assert r.fmt_count(103.0) == "103"
    assert r.fmt_count(1204) == "1,204"
    assert r.fmt_num(0.0935478, signed=True) == "+0.094"
    assert r.fmt_ci(0.2221, 0.3489) == "[+0.222, +0.349]"
    assert r.fmt_ci(None, 0.3) == "–"
    assert r.fmt_p(0.0182981) == "0.018"
    assert r.fmt_p(1.08e-7) == "1.1e-07"
    assert r.fmt_bf(399.4556) == "399.5"
    assert r.fmt_share(0.3375) == "33.8%"
    for bad in (None, math.nan, math.inf, "x"):
        assert r.fmt_num(bad) == r.fmt_count(bad) == r.fmt_p(bad) == r.fmt_bf(bad) == "–"


def test_names_in_words() -> None:
    assert r.metric_name("p_all") == "P(all answer tokens)"
    assert r.effect_name("mean_diff") == "mean difference"
    assert "Cohen" in r.effect_name("cohens_dz")
    assert r.statistical_test_name("mcnemar") == "exact McNemar test"
    assert r.evidence_words(0.998) == "evidence of contamination"
    assert r.evidence_words(0.80) == "weak evidence"
    assert r.evidence_words(0.60) == "no evidence"
    assert r.evidence_words(None) == "no verdict"


def test_report_renders_the_same_cells_everywhere() -> None:
    rep = r.Report(title="Run", headline=r.Headline("Contamination Confidence", "0.998", "P(all answer tokens)",
                                                    "evidence of contamination", raw=0.9975),
                   columns=("Metric", "C"), rows=(("P(all answer tokens)", "0.998"), ("accuracy (Acc)", "≥ 0.999")),
                   sentences=("One.",), facts=(("Pairs", "80"),), notes=("A note.",), command="zcp probe --model m")
    text, md, d = rep.to_text(), rep.to_markdown(), rep.to_dict()
    for s in ("Contamination Confidence 0.998 (P(all answer tokens)): evidence of contamination", "≥ 0.999",
              "Pairs 80", "One.", "A note.", "zcp probe --model m"):
        assert s in text and s.replace("Pairs 80", "Pairs **80**") in md
    assert d["rows"] == [["P(all answer tokens)", "0.998"], ["accuracy (Acc)", "≥ 0.999"]]
    assert list(rep.table().columns) == ["Metric", "C"]
    assert rep.fact("Pairs") == "80" and rep.fact("nope") == "–"


def test_no_headline_says_why() -> None:
    h = r.Headline("Contamination Confidence", r.MISSING, reason="too few pairs")
    assert h.text == "No Contamination Confidence: too few pairs"


def test_pp_and_share_ci() -> None:
    """Differences of shares in percentage points, share intervals as percentages; missing as –."""
    assert r.fmt_pp(20.83) == "+20.8 pp" and r.fmt_pp(-3.0) == "-3.0 pp" and r.fmt_pp(float("nan")) == r.MISSING
    assert r.fmt_share_ci(0.12, 0.305) == "[12.0%, 30.5%]" and r.fmt_share_ci(None, 0.3) == r.MISSING


def test_no_doc_shows_a_c_of_one() -> None:
    """C is never 1.000 (its ceiling reads "≥ 0.999", ``fmt_c``): not in the docs, the examples' README or notebooks."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    files = [*root.glob("docs/**/*.md"), root / "data" / "examples" / "README.md", *root.glob("notebooks/[0-9]*.py")]

    def text(f: Path) -> str:
        """The file's text, less the lab's method table: its cells are AUROCs, where 1.000 is perfect separation,
        and test_demo checks each of them against the bundled replicates run."""
        t = f.read_text()
        if f.name == "lab.md":
            head, _, rest = t.partition("## Which detector catches which leak")
            body, sep, tail = rest.partition("\n## ")
            t = head + "\n".join(ln for ln in body.splitlines() if not ln.startswith("| `")) + sep + tail
        return t

    found = [f"{f.relative_to(root)}: {m.group(0)!r}" for f in files if f.exists()
             for m in re.finditer(r".{0,40}(?<![\d.])1\.000(?![\d])", text(f))]
    assert not found, found


def test_intervals_of_values_are_unsigned_and_of_differences_signed() -> None:
    assert r.fmt_value_ci(0.568, 0.802) == "[0.568, 0.802]" and r.fmt_value_ci(0.5, 1) == "[0.500, 1.000]"
    assert r.fmt_ci(0.568, 0.802) == "[+0.568, +0.802]"  # an effect's: the sign says which side is ahead
    assert r.fmt_value_ci(None, 0.8) == r.MISSING and r.fmt_value_ci(math.nan, 0.8) == r.MISSING
