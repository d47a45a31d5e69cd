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
    """

    max_new_tokens: int = 32
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0
    stop: tuple[str, ...] = ()

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
        finish_reason: ``stop`` (EOS or stop string) or ``length``.
        tokens: Generated tokens, when logprobs were asked for.
        logprobs: Their logprobs, when asked for and available.
    """

    text: str
    n_tokens: int
    finish_reason: Literal["stop", "length"]
    tokens: tuple[str, ...] | None = None
    logprobs: tuple[float, ...] | None = None


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


def request_key(kind: str, backend: str, model: str, revision: str, request: Any) -> str:
    """Cache key: everything that changes the output, and nothing else."""
    payload = {"kind": kind, "backend": backend, "model": model, "revision": revision, "request": asdict(request)}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def chat(user: str, system: str | None = None) -> tuple[Message, ...]:
    """Messages for a single user turn, with an optional system message."""
    msgs = [Message("system", system)] if system else []
    return (*msgs, Message("user", user))
