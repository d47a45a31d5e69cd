"""The vLLM adaptor's bookkeeping, on a machine without vLLM.

vLLM itself cannot run here, so a stand-in ``vllm`` module answers in vLLM's
documented output shapes (``RequestOutput.outputs[0]`` with ``text``,
``token_ids``, ``finish_reason``, ``stop_reason``, ``logprobs``, and stop
strings kept under ``include_stop_str_in_output``; ``prompt_logprobs`` as
``[None, {token_id: Logprob}, ...]``), computed with the real SmolLM2. This
checks what VLLMBackend does with those shapes (prompt rendering, token
indexing, EOS trimming, order, caching) - not vLLM. The contract suite runs
the real thing where vLLM and a GPU exist.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest

from zcp_core.backends import (
    GenerateRequest,
    GenerateScoreRequest,
    ResponseCache,
    SamplingParams,
    ScoreRequest,
    allowed_token_ids,
    chat,
    generate_and_score,
)

pytestmark = pytest.mark.model


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class VSamplingParams:
    n: int = 1
    max_tokens: int | None = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    seed: int | None = None
    stop: list[str] | None = None
    logprobs: int | None = None
    prompt_logprobs: int | None = None
    include_stop_str_in_output: bool = False
    allowed_token_ids: list[int] | None = None


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    finish_reason: str
    logprobs: list[dict[int, Logprob]] | None
    stop_reason: str | None = None


@dataclass
class RequestOutput:
    outputs: list[CompletionOutput]
    prompt_logprobs: list[dict[int, Logprob] | None] | None = None
    prompt_token_ids: list[int] = field(default_factory=list)


def fake_vllm(hf) -> types.ModuleType:
    """A ``vllm`` module whose LLM answers with the transformers model, in vLLM's shapes."""
    import torch

    tok = hf.tokenizer

    class LLM:
        def __init__(self, model: str, **kwargs):
            self.model, self.kwargs, self.calls, self.params = model, kwargs, [], []

        def get_tokenizer(self):
            return tok

        def generate(self, prompts, sampling_params, use_tqdm=True):
            params = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
            self.params += params
            self.calls.append([(len(p["prompt_token_ids"]), sp.prompt_logprobs is not None)
                               for p, sp in zip(prompts, params)])
            return [self._one(p["prompt_token_ids"], sp) for p, sp in zip(prompts, params)]

        def _one(self, ids, sp):
            plp = None
            if sp.prompt_logprobs is not None:
                with torch.inference_mode():
                    logp = torch.log_softmax(hf.model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
                plp = [None] + [{ids[k]: Logprob(float(logp[k - 1, ids[k]]))} for k in range(1, len(ids))]
            # vLLM samples only from allowed_token_ids; the one list zcp sends is the number constraint's.
            number = sp.allowed_token_ids is not None and set(sp.allowed_token_ids) == set(allowed_token_ids(tok))
            if sp.allowed_token_ids is not None and not number:
                raise NotImplementedError("this stand-in masks only the number constraint's token list")
            req = GenerateRequest(prompt=tok.decode(ids), logprobs=sp.logprobs is not None,
                                  params=SamplingParams(max_new_tokens=sp.max_tokens, stop=tuple(sp.stop or ()),
                                                        constraint="number" if number else "none"))
            c = hf.generate([req])[0]
            text = c.text + (c.stop_reason or "") if sp.include_stop_str_in_output else c.text
            gen = tok(text, add_special_tokens=False).input_ids
            lps = [{t: Logprob(v)} for t, v in zip(gen, c.logprobs)] if c.logprobs is not None else None
            if c.finish_reason == "stop" and c.stop_reason is None:  # vLLM keeps EOS in token_ids (and its logprob)
                gen = gen + [tok.eos_token_id]
                lps = lps + [{tok.eos_token_id: Logprob(-0.1)}] if lps is not None else None
            out = CompletionOutput(text, gen, c.finish_reason, lps, c.stop_reason)
            return RequestOutput([out], plp, list(ids))

    mod = types.ModuleType("vllm")
    mod.LLM = LLM
    mod.SamplingParams = VSamplingParams
    return mod


@pytest.fixture
def vllm_on_hf(smollm2, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "vllm", fake_vllm(smollm2))
    from zcp_core.backends import VLLMBackend

    return VLLMBackend(str(tmp_path), revision="test", cache=ResponseCache(tmp_path / "c.sqlite"), dtype="float32")


def test_vllm_adaptor_scores_like_transformers(vllm_on_hf, smollm2):
    reqs = [ScoreRequest(messages=chat("Name the capital of France."), prefill="The capital of France is",
                         continuation=" Paris."),
            ScoreRequest(prompt="Two plus two equals", continuation=" four")]
    got, ref = vllm_on_hf.score(reqs), smollm2.score(reqs)
    for a, b in zip(got, ref):
        assert a.tokens == b.tokens and a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    assert vllm_on_hf.render(reqs[0]) == smollm2.render(reqs[0])
    assert vllm_on_hf.score(reqs) == got and vllm_on_hf.cache.hits == 2


def test_vllm_adaptor_generates_like_transformers(vllm_on_hf, smollm2):
    reqs = [GenerateRequest(messages=chat("What is 2+2? Reply with the number only."), params=SamplingParams(max_new_tokens=10),
                            logprobs=True),
            GenerateRequest(prompt="One, two,", params=SamplingParams(max_new_tokens=0)),
            GenerateRequest(messages=chat("Name the capital of France."), prefill="The capital of France is",
                            params=SamplingParams(max_new_tokens=5))]
    got, ref = vllm_on_hf.generate(reqs), smollm2.generate(reqs[:1] + reqs[2:])
    assert got[1].text == "" and got[1].n_tokens == 0  # vLLM needs max_tokens >= 1: answered without a call
    for a, b in zip(got[:1] + got[2:], ref):
        assert (a.text, a.finish_reason) == (b.text, b.finish_reason)
    assert got[0].finish_reason == "stop" and got[0].tokens == ref[0].tokens  # EOS trimmed as in transformers
    assert got[0].logprobs == pytest.approx(ref[0].logprobs, abs=1e-6)


def test_vllm_adaptor_stops_at_the_balanced_brace_and_continues(vllm_on_hf, smollm2, gsm8k_items):
    # The engine stops at every "}"; a nested group's "}" must be continued from until the box balances.
    suffix = "\n\nThe final answer is:\n\\[\n\\boxed"
    reqs = [GenerateRequest(messages=chat(f"{it.question}\nPut your final answer within \\boxed{{}}."), prefill=suffix,
                            thinking="off", params=SamplingParams(max_new_tokens=12, stop_at="balanced_brace"))
            for it in gsm8k_items[:2]]
    got, ref = vllm_on_hf.generate(reqs), smollm2.generate(reqs)
    for a, b in zip(got, ref):
        assert (a.text, a.n_tokens, a.finish_reason, a.stop_reason) == (b.text, b.n_tokens, b.finish_reason,
                                                                         b.stop_reason)
    closed = [c for c in ref if c.stop_reason == "}"]
    assert closed and all(c.text.count("}") >= 2 for c in closed)  # an inner group closed before the box
    assert len(vllm_on_hf.llm.calls) >= 2  # ... so the engine was asked again from the text so far


def test_vllm_adaptor_generate_score_scores_first(vllm_on_hf, smollm2):
    gen = GenerateRequest(messages=chat("What is 2+3?"), prefill="The answer is \\boxed",
                          params=SamplingParams(max_new_tokens=6, stop_at="balanced_brace"))
    req = GenerateScoreRequest(gen, ScoreRequest(messages=gen.messages, prefill=gen.prefill + "{", continuation="5"))
    (got,) = generate_and_score(vllm_on_hf, [req])
    (ref,) = generate_and_score(smollm2, [req])
    assert got.completion.text == ref.completion.text and got.logprobs.tokens == ref.logprobs.tokens
    assert got.logprobs.logprobs == pytest.approx(ref.logprobs.logprobs, abs=1e-4)
    # Scoring (prompt_logprobs) runs before generation, so the engine's prefix cache holds the prompt.
    assert [call[0][1] for call in vllm_on_hf.llm.calls] == [True, False]
    assert vllm_on_hf.generate([gen])[0] == got.completion and vllm_on_hf.cache.hits == 1  # shared cache entries


def test_vllm_adaptor_passes_the_number_constraint_as_allowed_token_ids(vllm_on_hf, smollm2, gsm8k_items):
    suffix = "\n\nThe final answer is:\n\\[\n\\boxed{"
    reqs = [GenerateRequest(messages=chat(f"{it.question}\nPut your final answer within \\boxed{{}}."), prefill=suffix,
                            thinking="off", params=SamplingParams(max_new_tokens=8, stop_at="balanced_brace",
                                                                  constraint=c))
            for it in gsm8k_items[:2] for c in ("number", "none")]
    got, ref = vllm_on_hf.generate(reqs), smollm2.generate(reqs)
    for a, b in zip(got, ref):
        assert (a.text, a.n_tokens, a.finish_reason, a.stop_reason) == (b.text, b.n_tokens, b.finish_reason,
                                                                         b.stop_reason)
    assert vllm_on_hf.supports_constraints
    sent = {tuple(sp.allowed_token_ids) if sp.allowed_token_ids is not None else None for sp in vllm_on_hf.llm.params}
    assert sent == {None, tuple(allowed_token_ids(smollm2.tokenizer))}  # the list, EOS included, or no mask at all
    assert got[0].text != got[1].text and got[0].text.endswith("}")
