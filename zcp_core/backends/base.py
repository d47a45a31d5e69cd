"""The backend protocol and the request/response records it trades in.

Backends are batch in, batch out, and keep order: ``result[i]`` answers
``request[i]``. Batching, length sorting and caching live inside backends.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

Role = Literal["system", "user", "assistant"]
Thinking = Literal["auto", "on", "off"]
StopAt = Literal["eos", "balanced_brace", "numeric_box"]
#: The stops that end a completion at the ``}`` closing its box.
BRACE_STOPS: tuple[str, ...] = ("balanced_brace", "numeric_box")
Constraint = Literal["none", "number"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True)
class SamplingParams:
    """Decoding parameters. ``temperature == 0`` means greedy.

    ``seed`` makes sampled outputs reproducible per request (not per batch),
    and it is part of the cache key, so n samples are n seeds.

    ``stop_at`` adds a structural stop to EOS, the budget and ``stop``:
    ``balanced_brace`` ends the completion at the ``}`` that closes the brace
    group its prompt left open (a prefilled ``\\boxed{``), or, where none is
    open, the first group it opens (nested groups counted, ``\\{`` not
    counted; see :func:`balanced_close` and :func:`stop_depth`).
    The completion then ends with that ``}`` and ``Completion.stop_reason`` is ``"}"``.
    ``numeric_box`` is ``balanced_brace`` for a box whose answer must be a
    number (the prompt leaves the box open): it also ends the completion at
    the token after which the box opens with a word or a derivation
    (:func:`zcp_core.backends.opening.box_opening`), with ``stop_reason``
    ``"word"``. The transformers backend (and ``zcp serve``) applies it; vLLM
    and other OpenAI-compatible servers stop at the brace only, which grades
    the same (a box that opens with a word is not graded).

    ``constraint`` restricts which tokens decoding may pick (scoring is never
    masked). Under ``number`` every generated token's text consists only of
    characters in ``0123456789.,-/`` and spaces (so a leading space too), or
    is a closing ``}`` optionally followed by whitespace, or the token is EOS
    (see :func:`zcp_core.backends.constraints.number_token_ok`): a boxed
    answer can then hold a number and its closing brace, never a derivation.
    A backend that cannot mask tokens (``supports_constraints`` False) raises
    ``ValueError`` for such a request.
    """

    max_new_tokens: int = 32
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0
    stop: tuple[str, ...] = ()
    stop_at: StopAt = "eos"
    constraint: Constraint = "none"

    @property
    def greedy(self) -> bool:
        """Whether decoding is deterministic argmax."""
        return self.temperature <= 0.0


@dataclass(frozen=True)
class GenerateRequest:
    """A generation request.

    Exactly one of ``messages`` (chat, rendered with the model's template) or
    ``prompt`` (raw text) is set. ``prefill`` is text the assistant turn must
    continue from; the completion excludes it.

    Attributes:
        messages: Chat messages.
        prompt: Raw prompt text (no template).
        prefill: Assistant-turn prefix to continue from.
        params: Sampling parameters.
        thinking: ``off`` closes any thinking block empty (template-aware),
            ``on`` asks for thinking, ``auto`` leaves the template's default.
        logprobs: Whether to return generated-token logprobs.
    """

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    prefill: str = ""
    params: SamplingParams = field(default_factory=SamplingParams)
    thinking: Thinking = "auto"
    logprobs: bool = False

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("GenerateRequest needs exactly one of messages or prompt")
        if self.messages is not None and not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))


@dataclass(frozen=True)
class ScoreRequest:
    """Teacher-forced scoring of ``continuation`` after a context.

    The context is the rendered ``messages`` (or raw ``prompt``) followed by
    ``prefill``; the continuation's tokens are those whose text lies after it.
    """

    continuation: str
    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    prefill: str = ""
    thinking: Thinking = "auto"

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("ScoreRequest needs exactly one of messages or prompt")
        if self.messages is not None and not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))
        if not self.continuation:
            raise ValueError("ScoreRequest.continuation must be non-empty")


@dataclass(frozen=True)
class Completion:
    """A generated continuation.

    Attributes:
        text: Generated text (after the prefill; stop strings cut off).
        n_tokens: Number of generated tokens.
        finish_reason: ``stop`` (EOS, stop string or closed brace) or ``length``.
        tokens: Generated tokens, when logprobs were asked for.
        logprobs: Their logprobs, when asked for and available.
        stop_reason: What ended a ``stop`` finish: the stop string, ``"}"`` for
            a ``balanced_brace`` close, ``"word"`` for a ``numeric_box`` box that opened with a word,
            ``None`` for EOS (and for ``length``).
    """

    text: str
    n_tokens: int
    finish_reason: Literal["stop", "length"]
    tokens: tuple[str, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class TokenLogprobs:
    """Teacher-forced logprobs of a continuation's tokens.

    ``available`` is False (with ``reason``) when the backend cannot score,
    so callers report "unavailable" rather than a fake 0.
    """

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    available: bool = True
    reason: str = ""

    @property
    def total(self) -> float:
        """Sum of logprobs."""
        return float(sum(self.logprobs))

    @property
    def mean(self) -> float:
        """Mean logprob per token (log of the geometric-mean probability)."""
        return float(sum(self.logprobs) / len(self.logprobs)) if self.logprobs else float("nan")


@dataclass(frozen=True)
class GenerateScoreRequest:
    """A generation and a teacher-forced scoring after the same prompt, computed together.

    ``score``'s context should extend ``generate``'s prompt (the probe scores
    the gold answer after ``prefill + "{"`` and generates after ``prefill``);
    a backend that can then shares one prefill between the two. The results
    equal those of separate ``generate`` and ``score`` calls (and share their
    cache entries).
    """

    generate: GenerateRequest
    score: ScoreRequest


@dataclass(frozen=True)
class GenerateScore:
    """What a :class:`GenerateScoreRequest` returns."""

    completion: Completion
    logprobs: TokenLogprobs


@runtime_checkable
class Backend(Protocol):
    """What every backend offers.

    Attributes:
        name: Backend kind (``transformers``, ``vllm``, ``openai``).
        model_id: Model name or path.
        revision: Something that changes when the weights change.
    """

    name: str
    model_id: str
    revision: str

    def generate(self, requests: Sequence[GenerateRequest], progress: bool = False) -> list[Completion]:
        """Generate one completion per request, in order."""
        ...

    def score(self, requests: Sequence[ScoreRequest], progress: bool = False) -> list[TokenLogprobs]:
        """Score one continuation per request, in order."""
        ...

    def render(self, request: GenerateRequest | ScoreRequest) -> str:
        """The exact prompt text (template applied, prefill appended)."""
        ...

    @property
    def supports_logprobs(self) -> bool:
        """Whether :meth:`score` returns real values."""
        ...

    @property
    def supports_constraints(self) -> bool:
        """Whether generation honours ``SamplingParams.constraint`` (else a constrained request raises ValueError)."""
        ...


# Fields added after caches were written: left out of the key at their default, which is
# the old behaviour, so entries written before they existed stay valid.
_LATE_PARAM_DEFAULTS = (("stop_at", "eos"), ("constraint", "none"))


def request_key(kind: str, backend: str, model: str, revision: str, request: Any) -> str:
    """Cache key: everything that changes the output, and nothing else."""
    body = asdict(request)
    params = body.get("params")
    if isinstance(params, dict):
        for k, default in _LATE_PARAM_DEFAULTS:
            if params.get(k) == default:
                del params[k]
    payload = {"kind": kind, "backend": backend, "model": model, "revision": revision, "request": body}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def chat(user: str, system: str | None = None) -> tuple[Message, ...]:
    """Messages for a single user turn, with an optional system message."""
    msgs = [Message("system", system)] if system else []
    return (*msgs, Message("user", user))


def open_braces(text: str) -> int:
    """How many brace groups ``text`` leaves open at its end (a stray ``}`` closes nothing; ``\\{`` is literal)."""
    depth, prev = 0, ""
    for c in text:
        if prev != "\\":
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(depth - 1, 0)
        prev = c
    return depth


def stop_depth(request: GenerateRequest) -> int:
    """Brace groups a request's prompt leaves open: the starting depth of its ``balanced_brace`` stop.

    Counted over the prefill of a chat request (the question is not counted,
    so a stray brace in it cannot move the stop) and over the whole text of a
    raw prompt. A probe's prefill ends in ``\\boxed{``, so its answer stops
    at the ``}`` closing that box.
    """
    return open_braces(request.prefill if request.messages is not None else (request.prompt or "") + request.prefill)


def balanced_close(text: str, depth: int = 0) -> int | None:
    """Where a completion's brace group closes: the index just past its ``}``, or None.

    Braces are counted from the start of ``text`` at ``depth`` (the groups
    the prompt left open, :func:`stop_depth`) and the first ``}`` that brings
    the depth to 0 or below closes: at depth 0 that is the group the
    completion opens (``{\\frac{1}{2}}`` closes at its last brace), at depth 1
    the group the prompt opened (``\\frac{1}{2}}``). A stray leading ``}``
    at depth 0 closes at once. A brace right after a backslash (``\\{``) is
    literal, as in :func:`zcp_core.answers.last_boxed`.
    """
    prev = ""
    for k, c in enumerate(text):
        if prev != "\\":
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth <= 0:
                    return k + 1
        prev = c
    return None


def request_size(request: GenerateRequest | ScoreRequest) -> int:
    """A cheap length proxy (characters before templating) for sorting requests into similar batches."""
    n = len(request.prompt or "") + len(request.prefill) + sum(len(m.content) for m in request.messages or ())
    return n + len(getattr(request, "continuation", ""))


def generate_and_score(backend: Any, requests: Sequence[GenerateScoreRequest],
                       progress: bool = False) -> list[GenerateScore]:
    """Generate and score each request's pair, in order, with one shared prefill where the backend offers it.

    Backends with a ``generate_score`` method fold the two (transformers: one
    forward pass over prompt and gold that also starts the generation);
    others get a batched ``generate`` then a batched ``score``.
    """
    fused = getattr(backend, "generate_score", None)
    if fused is not None:
        return list(fused(requests, progress=progress))
    comps = backend.generate([r.generate for r in requests], progress=progress)
    scores = backend.score([r.score for r in requests], progress=progress)
    return [GenerateScore(c, s) for c, s in zip(comps, scores)]
