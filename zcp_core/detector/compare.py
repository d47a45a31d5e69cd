"""The closed loop: scan -> clean -> train on original and cleaned -> attack -> SHAP.

:func:`compare` runs the whole shortcut study on one set of labelled texts and
returns a :class:`CompareResult`; :func:`write_compare_run` stores it as one
``detector`` run. Texts are deduplicated and split once; cleaning is applied to
the unique texts, so the original and cleaned detectors see the same texts on
the same sides. Cleaning can make two different texts identical (same body,
different opener): a cleaned test text equal to a cleaned training text is
removed from the cleaned test set, and recorded in ``split_fixes``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zcp_core.detector.attack import DEFAULT_PREFIX, AttackConfig, prefix_attack
from zcp_core.detector.base import DetectorKind
from zcp_core.detector.data import Split, split_texts
from zcp_core.detector.factory import score_frame, train_detector

logger = logging.getLogger(__name__)
if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.artifacts import CleanResult, PatternLibrary
    from zcp_core.detector.explain import Attributions
    from zcp_core.schema import TextRecord

FORMS = ("original", "cleaned")
METRIC_COLUMNS = ["trained_on", "evaluated_on", "n", "n_human", "n_llm", "roc_auc", "f1", "accuracy",
                  "tpr_at_1pct_fpr", "tpr_at_001pct_fpr", "notes"]


@dataclass(frozen=True)
class CompareConfig:
    """Settings of the closed loop.

    Attributes:
        kind: Detector kind for both detectors.
        detector_config: ``TfidfConfig`` / ``TransformerConfig`` (None: defaults).
        test_size: Held-out share of each label.
        seed: Split and sampling seed.
        prefix: The attack phrase.
        explain_n: Test texts explained per detector (half human, half LLM).
        explain_attacked: Attacked human texts also explained (for the app's text view).
        max_evals: SHAP evaluations per text for transformer detectors.
        edges: The cleaning's edge detector, as ``zcp clean --edges`` (``auto``: the bundled model).
    """

    kind: DetectorKind = "tfidf"
    detector_config: Any = None
    test_size: float = 0.3
    seed: int = 0
    prefix: str = DEFAULT_PREFIX
    explain_n: int = 200
    explain_attacked: int = 10
    max_evals: int = 200
    edges: str = "auto"


@dataclass(frozen=True)
class CompareResult:
    """Everything the closed loop produced.

    Attributes:
        split: The split over unique original texts.
        cleaning: The cleaner's result on the unique texts.
        cleaned_train: Cleaned training records (dropped texts excluded).
        cleaned_test: Cleaned test records (dropped and train-colliding texts excluded).
        detectors: ``original`` and ``cleaned`` detectors.
        metrics: One row per (trained_on, evaluated_on), columns ``METRIC_COLUMNS``.
        attack: Prefix-attack table (``zcp_core.detector.attack.ATTACK_COLUMNS``).
        attributions: Per detector (``original``, ``cleaned``), attributions on the
            explained test sample; ``<name>:attacked`` on attacked human texts.
        scores: Per original test text: ``id, label, llm_type, data_type, has_artifact,
            p_llm_original, p_llm_cleaned``.
        split_fixes: Cleaned test texts removed because they equal a cleaned training text.
    """

    split: Split
    cleaning: CleanResult
    cleaned_train: tuple[TextRecord, ...]
    cleaned_test: tuple[TextRecord, ...]
    detectors: Mapping[str, Any]
    metrics: pd.DataFrame
    attack: pd.DataFrame
    attributions: Mapping[str, Attributions]
    scores: pd.DataFrame
    split_fixes: pd.DataFrame
    config: CompareConfig = field(default_factory=CompareConfig)

    def artifact_shares(self) -> dict[str, float | None]:
        """Share of |attribution| on artifact spans, per detector (texts with an artifact)."""
        return {name: a.artifact_share() for name, a in self.attributions.items()}


def cleaned_views(split: Split, cleaning: CleanResult) -> tuple[tuple, tuple, pd.DataFrame]:
    """Cleaned train and test records, keeping no cleaned text on both sides.

    Returns:
        ``(train, test, fixes)``; ``fixes`` has ``id, collides_with, reason``.
    """
    import pandas as pd

    by_id = {r.id: r for r in cleaning.texts}
    train = tuple(by_id[r.id] for r in split.train if r.id in by_id)
    train_text = {r.text: r.id for r in train}
    test, fixes = [], []
    for r in split.test:
        c = by_id.get(r.id)
        if c is None:
            continue
        if c.text in train_text:
            fixes.append({"id": c.id, "collides_with": train_text[c.text], "reason": "cleaned_text_equals_train_text"})
            continue
        test.append(c)
    return train, tuple(test), pd.DataFrame(fixes, columns=["id", "collides_with", "reason"])


def metrics_table(detectors: Mapping[str, Any], eval_sets: Mapping[str, Sequence[TextRecord]]) -> pd.DataFrame:
    """Metrics of every detector on every evaluation set (columns ``METRIC_COLUMNS``)."""
    import pandas as pd

    from zcp_core.detector.metrics import compute_metrics

    rows = []
    for dname, det in detectors.items():
        for ename, recs in eval_sets.items():
            sf = score_frame(det, recs)
            m = compute_metrics(list(sf["label"]), list(sf["p_llm"])).to_dict()
            rows.append({"trained_on": dname, "evaluated_on": ename, **m})
    return pd.DataFrame(rows, columns=METRIC_COLUMNS)


def explain_sample(records: Sequence[TextRecord], n: int, seed: int) -> list[TextRecord]:
    """Up to ``n`` records, half human and half LLM, seeded."""
    rng = random.Random(seed)
    out: list[TextRecord] = []
    for label in ("human", "llm"):
        group = [r for r in records if r.label == label]
        out += rng.sample(group, min(len(group), n // 2))
    return out


def compare(records: Sequence[TextRecord], library: PatternLibrary, config: CompareConfig | None = None
            ) -> CompareResult:
    """Run scan -> clean -> train both -> metrics -> attack -> SHAP on labelled texts.

    Args:
        records: Labelled texts (``human`` / ``llm``), possibly overlapping files.
        library: The artifact pattern library (``zcp_core.artifacts.patterns.load_library``).
        config: Loop settings.
    """
    import pandas as pd

    from zcp_core.artifacts import CleanConfig, artifact_spans, clean
    from zcp_core.detector.explain import explain
    from zcp_core.schema import TextRecord as TR

    cfg = config or CompareConfig()
    split = split_texts(records, cfg.test_size, cfg.seed)
    logger.info(f"{split.dedup.n_records} records, {split.dedup.n_unique} unique texts: "
        f"{len(split.train)} train / {len(split.test)} test")
    cleaning = clean(split.dedup.records, library, config=CleanConfig(edges=cfg.edges))  # as `zcp clean` cleans
    train_c, test_c, fixes = cleaned_views(split, cleaning)
    logger.info(f"cleaning: {len(cleaning.dropped)} texts dropped, {int(cleaning.edits['applied'].sum())} edits applied")
    detectors = {}
    for name, train in (("original", split.train), ("cleaned", train_c)):
        logger.info(f"training the {name}-trained {cfg.kind} detector on {len(train)} texts")
        detectors[name] = train_detector(train, cfg.kind, cfg.detector_config)
    metrics = metrics_table(detectors, {"original": split.test, "cleaned": test_c})
    attack = prefix_attack(detectors, split.test, AttackConfig(prefix=cfg.prefix))

    def span_fn(text: str) -> list:
        return artifact_spans(text, library)

    sample = explain_sample(split.test, cfg.explain_n, cfg.seed)
    attacked = [TR(f"{r.id}+prefix", cfg.prefix + r.text, r.label, r.llm_type, r.data_type)
                for r in explain_sample(split.test, 2 * cfg.explain_attacked, cfg.seed + 1) if r.label == "human"]
    attributions = {}
    for name, det in detectors.items():
        logger.info(f"explaining the {name}-trained detector on {len(sample)} test texts")
        attributions[name] = explain(det, sample, span_fn, cfg.max_evals)
        if attacked:
            attributions[f"{name}:attacked"] = explain(det, attacked, span_fn, cfg.max_evals)
    scores = score_frame(detectors["original"], split.test).rename(columns={"p_llm": "p_llm_original"})
    scores["p_llm_cleaned"] = detectors["cleaned"].predict_proba([r.text for r in split.test])
    scores["has_artifact"] = [any(s.family != "domain" for s in span_fn(r.text)) for r in split.test]
    scores = scores[["id", "label", "llm_type", "data_type", "has_artifact", "p_llm_original", "p_llm_cleaned"]]
    return CompareResult(split, cleaning, train_c, test_c, detectors, metrics, attack, attributions,
                         pd.DataFrame(scores), fixes, cfg)


def attack_verdict(attack: pd.DataFrame) -> dict[str, Any]:
    """Whether the paper's qualitative result holds: original falls for the attack, cleaned does not.

    "Falls" means most attacked human texts (> 50%) are called LLM.
    """
    rate = {r.trained_on: r.classified_llm / r.n if r.n else 0.0 for r in attack.itertuples()}
    orig, cln = rate.get("original"), rate.get("cleaned")
    holds = orig is not None and cln is not None and orig > 0.5 and cln <= 0.5
    return {"original_llm_rate": orig, "cleaned_llm_rate": cln, "paper_result_holds": bool(holds),
            "criterion": "original-trained calls > 50% of attacked human texts LLM; cleaned-trained <= 50%"}
