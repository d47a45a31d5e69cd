"""Min-K% Prob and the zlib ratio from per-token logprobs: pure functions, no model.

Both are scored on a text's teacher-forced token logprobs (the first token has
no context and is never scored, in every backend). Both are oriented so that
a **higher score means more likely a member** (seen in training):

- **Min-K% Prob** (Shi et al., 2023, "Detecting Pretraining Data from Large
  Language Models"): the mean of the lowest ``k`` fraction of the token
  logprobs. A member has fewer surprising tokens, so its lowest logprobs are
  less negative. The reference code (and LLMSanitize) stores the negated mean
  and ranks by ``-score``; storing the mean itself is the same ranking.
- **zlib ratio** (Carlini et al., 2021, "Extracting Training Data from Large
  Language Models"; LLMSanitize's ``ppl/zlib``): the text's log-perplexity
  divided by its zlib-compressed length in bytes, ``log PPL / zlib_bytes``,
  where ``log PPL = -mean logprob``. Low means the model finds the text easier
  than a generic compressor does, i.e. member. We store its negation,
  ``zlib = mean logprob / zlib_bytes = -(log PPL / zlib_bytes)``, so that
  higher means member like every other detector.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BaselineConfig:
    """How the baselines score a text.

    Attributes:
        k: Fraction of the lowest token logprobs Min-K% Prob averages
            (0 < k <= 1; the paper's default 20%).
    """

    k: float = 0.2

    def __post_init__(self) -> None:
        if not 0.0 < self.k <= 1.0:
            raise ValueError(f"BaselineConfig.k must be in (0, 1], got {self.k!r}")


@dataclass(frozen=True)
class BaselineScores:
    """The baselines of one text (scores are NaN when it has no scored token).

    Attributes:
        n_tokens: Scored tokens.
        mean_logprob: Mean token logprob (``-log PPL``).
        n_min_k: Tokens Min-K% Prob averaged.
        min_k: Min-K% Prob, the mean of the lowest ``n_min_k`` logprobs (higher = member).
        zlib_bytes: Length of the zlib-compressed UTF-8 text.
        zlib: ``mean_logprob / zlib_bytes`` (higher = member).
    """

    n_tokens: int
    mean_logprob: float
    n_min_k: int
    min_k: float
    zlib_bytes: int
    zlib: float


def min_k_count(n_tokens: int, k: float) -> int:
    """How many of ``n_tokens`` logprobs Min-K% averages: ``floor(k * n)``, at least 1 (0 for no tokens).

    The reference code takes ``int(n * k)``, which is 0 (a NaN score) for texts
    under ``1 / k`` tokens; we keep at least the lowest one. The small epsilon
    keeps ``0.3 * 10`` at 3 despite float rounding.
    """
    if n_tokens <= 0:
        return 0
    return max(1, min(n_tokens, math.floor(n_tokens * k + 1e-9)))


def min_k_prob(logprobs: Sequence[float], k: float = 0.2) -> float:
    """Min-K% Prob: the mean of the lowest ``k`` fraction of ``logprobs`` (NaN when empty).

    Args:
        logprobs: Per-token logprobs of the text.
        k: Fraction to average, in (0, 1].

    Returns:
        The mean of the :func:`min_k_count` smallest logprobs; higher means more likely a member.
    """
    n = min_k_count(len(logprobs), k)
    if n == 0:
        return float("nan")
    return math.fsum(sorted(logprobs)[:n]) / n


def zlib_bytes(text: str) -> int:
    """Length in bytes of ``zlib.compress`` (default level) of the UTF-8 text, as in Carlini et al."""
    return len(zlib.compress(text.encode("utf-8")))


def zlib_ratio(logprobs: Sequence[float], n_bytes: int) -> float:
    """The zlib ratio, oriented so higher means member: ``mean(logprobs) / n_bytes`` (NaN when empty).

    This is ``-(log PPL / zlib_bytes)``, the negation of Carlini et al.'s ratio.

    Args:
        logprobs: Per-token logprobs of the text.
        n_bytes: Its zlib-compressed length (:func:`zlib_bytes`).
    """
    if not logprobs:
        return float("nan")
    if n_bytes <= 0:
        raise ValueError(f"zlib_ratio needs a positive compressed length, got {n_bytes}")
    return math.fsum(logprobs) / len(logprobs) / n_bytes


def baseline_scores(logprobs: Sequence[float], text: str, config: BaselineConfig = BaselineConfig()) -> BaselineScores:
    """Every baseline of one text from its per-token logprobs.

    Args:
        logprobs: The text's teacher-forced token logprobs.
        text: The text itself (for its zlib length).
        config: Baseline settings.
    """
    n = len(logprobs)
    nb = zlib_bytes(text)
    return BaselineScores(
        n_tokens=n,
        mean_logprob=math.fsum(logprobs) / n if n else float("nan"),
        n_min_k=min_k_count(n, config.k),
        min_k=min_k_prob(logprobs, config.k),
        zlib_bytes=nb,
        zlib=zlib_ratio(logprobs, nb),
    )
