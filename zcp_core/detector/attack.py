"""Adversarial prefix attack: prepend an LLM-style opener to human texts.

A detector that learned the artifact opener as a shortcut calls the attacked
human texts LLM-written; one trained on cleaned data should not. The table
has the shape of the paper's Table 4 (trained on x classified human / LLM),
with the counts before the attack alongside for reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import TextRecord

DEFAULT_PREFIX = "Here is a 7 sentence abstract for the provided article title: "
ATTACK_COLUMNS = ["trained_on", "prefix", "n", "classified_human", "classified_llm", "flip_rate",
                  "before_human", "before_llm", "mean_p_llm_before", "mean_p_llm_after"]


@dataclass(frozen=True)
class AttackConfig:
    """The prefix attack's settings.

    Attributes:
        prefix: Phrase prepended verbatim to each human text.
        threshold: Probability at or above which a text is called LLM.
    """

    prefix: str = DEFAULT_PREFIX
    threshold: float = 0.5


def attack_texts(records: Sequence[TextRecord], prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The attacked versions of the human texts among ``records`` (others are skipped)."""
    return [prefix + r.text for r in records if r.label == "human"]


def prefix_attack(detectors: Mapping[str, Any], records: Sequence[TextRecord],
                  config: AttackConfig | None = None) -> pd.DataFrame:
    """Confusion counts of each detector on human texts with and without the prefix.

    Args:
        detectors: Name (``original``, ``cleaned``...) to detector.
        records: Test records; only ``human`` ones are attacked.
        config: Prefix and threshold.

    Returns:
        One row per detector, columns ``ATTACK_COLUMNS``: ``classified_human``
        and ``classified_llm`` after the attack, ``flip_rate`` (share of texts
        called human before and LLM after), and the counts before.
    """
    import numpy as np
    import pandas as pd

    cfg = config or AttackConfig()
    human = [r.text for r in records if r.label == "human"]
    attacked = [cfg.prefix + t for t in human]
    rows = []
    for name, det in detectors.items():
        before = np.asarray(det.predict_proba(human)) if human else np.zeros(0)
        after = np.asarray(det.predict_proba(attacked)) if human else np.zeros(0)
        b_llm, a_llm = before >= cfg.threshold, after >= cfg.threshold
        n = len(human)
        rows.append({
            "trained_on": name, "prefix": cfg.prefix, "n": n,
            "classified_human": int((~a_llm).sum()), "classified_llm": int(a_llm.sum()),
            "flip_rate": float((~b_llm & a_llm).sum() / n) if n else 0.0,
            "before_human": int((~b_llm).sum()), "before_llm": int(b_llm.sum()),
            "mean_p_llm_before": float(before.mean()) if n else 0.0,
            "mean_p_llm_after": float(after.mean()) if n else 0.0,
        })
    return pd.DataFrame(rows, columns=ATTACK_COLUMNS)


def format_attack_table(df: pd.DataFrame) -> str:
    """The attack table as plain text, in the paper's Table 4 layout."""
    lines = [f"prefix attack on {int(df['n'].iloc[0]) if len(df) else 0} human test texts: {DEFAULT_PREFIX!r}"
             if len(df) and df["prefix"].iloc[0] == DEFAULT_PREFIX else
             f"prefix attack: {df['prefix'].iloc[0]!r}" if len(df) else "prefix attack: no detectors",
             f"{'trained on':<12} {'classified human':>17} {'classified LLM':>15}   (before attack: human / LLM)"]
    for r in df.itertuples():
        lines.append(f"{r.trained_on:<12} {r.classified_human:>17} {r.classified_llm:>15}   "
                     f"({r.before_human} / {r.before_llm})")
    return "\n".join(lines)
