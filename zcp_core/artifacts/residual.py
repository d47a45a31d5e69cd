"""How many artifacts a cleaned release still holds, as measured for the pattern library that cleaned it.

A residual rate is measured once per frozen library (``benchmarks/clean_residual.py``): a seeded random
sample of cleaned LLM texts is marked by a reviewer who did not write the patterns, and the share still holding
an artifact is reported with its Clopper–Pearson 95% interval. The result is stored beside the library
(``library/<name>.residual.yaml``) with the library's sha256, so a card quotes it only for the exact library
it was measured on and says "not measured" for any other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zcp_core.artifacts.patterns import PatternLibrary


@dataclass(frozen=True)
class ResidualRate:
    """The measured residual share of one library.

    Attributes:
        library_version: The library's version string.
        library_sha256: The sha256 of the library it was measured on.
        population: What was sampled, in words (``8500 cleaned LLM texts of the DetectRL test splits``).
        reviewed: Texts reviewed.
        with_artifact: Texts the reviewer marked as still holding an artifact.
        ci_low: Clopper–Pearson 95% interval, lower end.
        ci_high: Its upper end: the bound a card quotes.
        reviewer: Who reviewed, in words (never one of the pattern authors).
        results: The results file that reports it.
        edges: The edge detector the sampled texts were cleaned with (:func:`zcp_core.artifacts.edges_apply.edges_label`).
        held_back: LLM-written texts of the population held back (left out of the release, so never sampled).
    """

    library_version: str
    library_sha256: str
    population: str
    reviewed: int
    with_artifact: int
    ci_low: float
    ci_high: float
    reviewer: str
    results: str = "benchmarks/results/clean_residual.md"
    edges: str = "none"
    held_back: int = 0

    @property
    def share(self) -> float:
        """The point estimate."""
        return self.with_artifact / self.reviewed if self.reviewed else 0.0

    def to_dict(self) -> dict[str, Any]:
        """YAML/JSON form."""
        return asdict(self)


def measure(library: PatternLibrary, population: str, marks: list[bool], reviewer: str, edges: str = "none",
            held_back: int = 0) -> ResidualRate:
    """The residual rate from a review: ``marks[i]`` is True when text ``i`` still holds an artifact."""
    from scipy.stats import binomtest

    k, n = sum(marks), len(marks)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact") if n else None
    return ResidualRate(library.version, library.sha256, population, n, k, float(ci.low) if ci else 0.0,
                        float(ci.high) if ci else 1.0, reviewer, edges=edges, held_back=held_back)


def residual_path(library: PatternLibrary) -> Path:
    """Where the measurement of ``library`` is stored: beside its (first) file."""
    first = Path(library.path.split(" + ")[0])
    return first.with_name(first.stem + ".residual.yaml")


def save_residual(rate: ResidualRate, library: PatternLibrary) -> Path:
    """Store ``rate`` beside the library file."""
    import yaml

    from zcp_core.runs import atomic_write_bytes

    path = residual_path(library)
    atomic_write_bytes(path, yaml.safe_dump(rate.to_dict(), sort_keys=False, allow_unicode=True).encode("utf-8"))
    return path


def load_residual_any(library: PatternLibrary) -> ResidualRate | None:
    """The residual rate stored beside ``library``'s file, whichever library version it was measured on."""
    import yaml

    path = residual_path(library)
    if not path.is_file():
        return None
    rec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return ResidualRate(**{k: rec[k] for k in ResidualRate.__dataclass_fields__ if k in rec})


def load_residual(library: PatternLibrary) -> ResidualRate | None:
    """The residual rate measured on exactly this library, or None (none measured, or another library's)."""
    rate = load_residual_any(library)
    return rate if rate is not None and rate.library_sha256 == library.sha256 else None


def residual_lines(library: PatternLibrary, edges: str = "none") -> list[str]:
    """The card's section on what cleaning leaves behind; ``edges`` is the run's edge detector
    (:func:`zcp_core.artifacts.edges_apply.edges_label`): a measurement made with another one is not quoted."""
    from zcp_core.report import fmt_count, fmt_share

    rate = load_residual(library)
    head = ["## What cleaning leaves behind", ""]
    if rate is None:
        return [*head, f"Not measured for pattern library {library.version}: no reviewed sample of its cleaned "
                       "texts exists, so the share of artifacts it leaves is unknown.", ""]
    if rate.edges != edges:
        return [*head, f"Not measured for this cleaning: the reviewed sample of pattern library "
                       f"{rate.library_version} was cleaned with edge detector {rate.edges}, this release with "
                       f"{edges}, so the share of artifacts it leaves is unknown.", ""]
    # one labelled clause per stored field, so the sentence reads whatever words the measurement stored
    return [*head, f"Measured for pattern library {rate.library_version}"
                   + (f" with the learned edge detector {rate.edges}" if rate.edges != "none" else "") + ".", "",
            f"- Sample: {rate.reviewed} cleaned texts drawn at random (seeded) from {rate.population}.",
            f"- Reviewer: {rate.reviewer}.",
            f"- Result: {rate.with_artifact} of {rate.reviewed} still hold an artifact ({fmt_share(rate.share)}; "
            f"Clopper–Pearson 95% interval {fmt_share(rate.ci_low)} to {fmt_share(rate.ci_high)}, so at most "
            f"{fmt_share(rate.ci_high)} at that confidence).",
            *([f"- Held back: {fmt_count(rate.held_back)} LLM-written texts that could not be repaired by cutting "
               "were left out of the release and so out of the sample; they count as clean only because the "
               "release leaves them out."] if rate.held_back else []),
            f"- Report: `{rate.results}`.", ""]
