"""One contract suite for every backend available here.

* ``transformers``: the real embedded SmolLM2 on CPU.
* ``openai``: :class:`OpenAIBackend` against ``zcp serve`` (the same server
  code, in a background thread on a free 127.0.0.1 port) over that model.
* ``vllm``: skips cleanly unless vLLM and a GPU are present.

The API backend must also give the same outputs as the in-process one.
"""

from __future__ import annotations

import copy

import pytest

from zcp_core.backends import (
    GenerateRequest,
    GenerateScoreRequest,
    ResponseCache,
    SamplingParams,
    ScoreRequest,
    allowed_token_ids,
    balanced_close,
    chat,
    generate_and_score,
    number_token_ok,
    open_braces,
    stop_depth,
    word_stop,
)
from zcp_core.backends.base import request_key
from zcp_core.probe.config import NOT_GRADED

pytestmark = pytest.mark.model

GREEDY = SamplingParams(max_new_tokens=6)
PREFILL = "The capital of France is"
CAPITAL = chat("Name the capital of France in one word.")


@pytest.fixture(scope="module")
def api_server(smollm2):
    """``zcp serve`` over the session's SmolLM2, on 127.0.0.1."""
    from zcp_core.serve import BackgroundServer, ServerConfig

    with BackgroundServer(smollm2, ServerConfig(served_model_name="smollm2")) as srv:
        yield srv


@pytest.fixture(scope="module")
def vllm_backend():
    pytest.importorskip("vllm", reason="vLLM is not installed (GPU extra)")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a GPU")
    from zcp_core.backends import VLLMBackend, ensure_converted

    return VLLMBackend(str(ensure_converted()), dtype="float32", gpu_memory_utilization=0.3, enforce_eager=True)


@pytest.fixture(params=["transformers", "openai", "vllm"])
def backend(request):
    if request.param == "transformers":
        return request.getfixturevalue("smollm2")
    if request.param == "openai":
        from zcp_core.backends import OpenAIBackend

        return OpenAIBackend(request.getfixturevalue("api_server").url, "smollm2")
    return request.getfixturevalue("vllm_backend")


def with_cache(backend, path):
    """The same backend (sharing its model or connection) with a fresh response cache."""
    if backend.name == "openai":
        from zcp_core.backends import OpenAIBackend

        return OpenAIBackend(backend.base_url, backend.model_id, cache=ResponseCache(path))
    other = copy.copy(backend)
    other.cache = ResponseCache(path)
    return other


def manual_logprobs(hf, context: str, continuation: str) -> tuple[list[str], list[float]]:
    """Continuation logprobs from one plain forward pass of the transformers model."""
    import torch

    tok = hf.tokenizer
    enc = tok(context + continuation, add_special_tokens=False, return_offsets_mapping=True)
    ids = enc["input_ids"]
    start = next(k for k, (_, e) in enumerate(enc["offset_mapping"]) if e > len(context))
    with torch.inference_mode():
        logits = hf.model(input_ids=torch.tensor([ids])).logits[0].float()
    logp = torch.log_softmax(logits, -1)
    return [tok.decode([t]) for t in ids[start:]], [float(logp[k - 1, ids[k]]) for k in range(start, len(ids))]


def test_order_kept_and_greedy_deterministic(backend):
    reqs = [
        GenerateRequest(messages=chat("Say hello."), params=GREEDY),
        GenerateRequest(prompt="Question: What is 12 plus 30?\nAnswer: The answer is", params=GREEDY),
        GenerateRequest(messages=chat("List three colours of the rainbow, separated by commas, and nothing else."),
                        params=GREEDY),
    ]
    batch = backend.generate(reqs)
    singles = [backend.generate([r])[0] for r in reqs]
    assert [c.text for c in batch] == [c.text for c in singles]
    assert len({c.text for c in batch}) == 3  # the answers really differ, so order is tested
    assert backend.generate(reqs[:1])[0] == singles[0]  # greedy: same request, same answer
    assert all(c.finish_reason in ("stop", "length") and 0 < c.n_tokens <= 6 for c in batch)


def test_score_matches_manual_forward_pass(backend, smollm2):
    reqs = [
        ScoreRequest(messages=CAPITAL, prefill=PREFILL, continuation=" Paris."),
        ScoreRequest(prompt="Two plus two equals", continuation=" four, as everyone knows"),
    ]
    got = backend.score(reqs)
    for r, lp in zip(reqs, got):
        toks, vals = manual_logprobs(smollm2, smollm2.render(r), r.continuation)
        assert lp.available and list(lp.tokens) == toks
        assert lp.logprobs == pytest.approx(vals, abs=1e-4)
        assert "".join(lp.tokens) == r.continuation
    assert backend.supports_logprobs


def test_prefill_honoured(backend, smollm2):
    req = GenerateRequest(messages=CAPITAL, prefill=PREFILL, params=SamplingParams(max_new_tokens=4))
    text = backend.render(req)
    assert text == smollm2.tokenizer.apply_chat_template(
        [{"role": "user", "content": CAPITAL[0].content}], tokenize=False, add_generation_prompt=True) + PREFILL
    (c,) = backend.generate([req])
    # The completion continues the prefill (it does not restart the answer) ...
    assert c.text.startswith(" Paris") and PREFILL not in c.text
    # ... exactly as a raw prompt ending in the prefill does.
    (raw,) = backend.generate([GenerateRequest(prompt=text, params=req.params)])
    assert raw.text == c.text
    paris, london = backend.score([ScoreRequest(messages=CAPITAL, prefill=PREFILL, continuation=x)
                                   for x in (" Paris", " London")])
    assert paris.total > london.total


def test_thinking_off_adds_nothing_to_a_template_without_thinking(backend):
    auto, off = (backend.render(GenerateRequest(messages=CAPITAL, thinking=t)) for t in ("auto", "off"))
    assert off == auto
    assert "<think>" not in off and off.endswith("<|im_start|>assistant\n")


def test_cache_hits_make_no_model_call(backend, tmp_path):
    cached = with_cache(backend, tmp_path / "responses.sqlite")
    gen = [GenerateRequest(messages=chat("Say hi."), params=SamplingParams(max_new_tokens=3))]
    sc = [ScoreRequest(prompt="One, two,", continuation=" three")]
    first = cached.generate(gen), cached.score(sc)
    assert (cached.cache.hits, cached.cache.misses) == (0, 2)
    if backend.name == "transformers":
        cached.model = None  # any model call would now fail
    second = cached.generate(gen), cached.score(sc)
    assert (cached.cache.hits, cached.cache.misses) == (2, 2)
    assert second == first


def test_sampling_reproducible_per_seed_and_batch_independent(backend):
    def req(seed: int, prompt: str = "Once upon a time") -> GenerateRequest:
        return GenerateRequest(prompt=prompt, params=SamplingParams(max_new_tokens=8, temperature=1.0, seed=seed))

    alone = backend.generate([req(7)])[0]
    mixed = backend.generate([req(8, "My favourite food is"), req(7), req(9)])
    assert mixed[1].text == alone.text
    assert len({alone.text, mixed[2].text, backend.generate([req(11)])[0].text}) > 1  # seeds matter


def test_api_outputs_equal_in_process_outputs(api_server, smollm2):
    from zcp_core.backends import OpenAIBackend

    api = OpenAIBackend(api_server.url, "smollm2")
    gens = [
        GenerateRequest(messages=chat("What is 2+2?"), params=SamplingParams(max_new_tokens=8), logprobs=True),
        GenerateRequest(messages=CAPITAL, prefill=PREFILL, params=SamplingParams(max_new_tokens=4), logprobs=True),
        GenerateRequest(prompt="Once upon a time", params=SamplingParams(max_new_tokens=8, temperature=0.8, seed=3),
                        logprobs=True),
        GenerateRequest(prompt="Count: one, two, three,", params=SamplingParams(max_new_tokens=12, stop=(",",))),
    ]
    for a, b in zip(api.generate(gens), smollm2.generate(gens)):
        assert (a.text, a.n_tokens, a.finish_reason, a.tokens) == (b.text, b.n_tokens, b.finish_reason, b.tokens)
        assert (a.logprobs is None) == (b.logprobs is None)
        if a.logprobs is not None:
            assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    scores = [ScoreRequest(messages=chat("Hi!"), continuation="Hello! How can I help?"),
              ScoreRequest(prompt="Question: café costs 2 €.\nAnswer:", continuation=" 2")]
    for a, b in zip(api.score(scores), smollm2.score(scores)):
        assert a.tokens == b.tokens and a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


# ---- the probe's answer: the balanced-brace stop and one shared prefill ------------------------
SUFFIX = "\n\nThe final answer is:\n\\[\n\\boxed{"  # the probe's prefill: the box is open (depth 1)


def probe_pair(item, budget: int = 12, stop_at: str = "balanced_brace", constraint: str = "none"
               ) -> GenerateScoreRequest:
    """The probe's zero-CoT generation and its gold scoring for one GSM8K item."""
    msgs = chat(f"{item.question}\nPlease reason step by step, and put your final answer within \\boxed{{}}.")
    params = SamplingParams(max_new_tokens=budget, stop_at=stop_at, constraint=constraint)  # type: ignore[arg-type]
    gen = GenerateRequest(messages=msgs, prefill=SUFFIX, thinking="off", params=params)
    return GenerateScoreRequest(gen, ScoreRequest(messages=msgs, prefill=SUFFIX, thinking="off",
                                                  continuation=item.answer))


@pytest.fixture
def count_prefill_rows(smollm2, monkeypatch):
    """Rows of every multi-token forward pass of the in-process model (the server's too) that starts from no
    cache: prompt prefills (decoding steps with lookup drafts pass the prefill's cache)."""
    rows: list[int] = []
    forward = smollm2.model.forward

    def counted(*args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None and ids.shape[1] > 1 and kwargs.get("cache") is None:
            rows.append(int(ids.shape[0]))
        return forward(*args, **kwargs)

    monkeypatch.setattr(smollm2.model, "forward", counted)
    return rows


@pytest.mark.parametrize(("text", "end"), [
    ("{18}\n\\]", 4),
    ("{\\frac{1}{2}} and more", 13),          # nested groups: the last brace closes the box
    ("{\n  \\text{2}\n}\n$$", 14),
    ("{\\{1, 2\\}} x", 10),                  # \{ and \} are literal braces
    ("}", 1),                                 # a stray close ends at once
    ("{1 + 2", None), ("no braces", None),
])
def test_balanced_close_golden(text, end):
    assert balanced_close(text) == end


@pytest.mark.parametrize(("text", "end"), [
    ("18}\n\\]", 3),                        # the prompt opened the box: its "}" closes
    ("\\frac{1}{2}} and", 12),
    ("\n  \\begin{align*}\n3", None),         # an inner group closing is not the box closing
    ("\\{1\\}} x", 6),
    ("{1 + 2}", None),
])
def test_balanced_close_from_an_open_box(text, end):
    assert balanced_close(text, 1) == end


@pytest.mark.parametrize(("text", "depth"), [
    ("The final answer is:\n\\[\n\\boxed{", 1), ("\\boxed", 0), ("{a}{b", 1), ("}{", 1), ("\\{", 0),
    ("{{", 2), ("", 0),
])
def test_open_braces_golden(text, depth):
    assert open_braces(text) == depth


def test_stop_depth_counts_the_prefill_of_a_chat_and_the_whole_raw_prompt():
    p = SamplingParams(max_new_tokens=4, stop_at="balanced_brace")
    assert stop_depth(GenerateRequest(messages=chat("a stray { in a question"), prefill=SUFFIX, params=p)) == 1
    assert stop_depth(GenerateRequest(prompt="x = \\boxed{", params=p)) == 1
    assert stop_depth(GenerateRequest(prompt="x = \\boxed", prefill="{", params=p)) == 1


@pytest.mark.parametrize("start", [0, 1])
@pytest.mark.parametrize("text", ["{\\frac{1}{2}} and", "{\n  \\text{Janet}\n}\n", "{\\{x\\}}}", "}}{", "{{}}}",
                                  "\\frac{1}{2}} and", "\\begin{align*} 3"])
def test_brace_table_stops_on_the_token_that_closes(smollm2, text, start):
    import torch

    from zcp_core.backends.hf_braces import brace_step

    table = smollm2._braces()
    ids = smollm2.tokenizer(text, add_special_tokens=False).input_ids
    depth, esc = torch.tensor([start]), torch.zeros(1, dtype=torch.bool)
    closed_at = None
    for k, t in enumerate(ids):
        depth, esc, closes = brace_step(table, depth, esc, torch.tensor([t]))
        if bool(closes[0]):
            closed_at = k
            break
    end = balanced_close(text, start)
    prefix = [len(smollm2.tokenizer.decode(ids[: k + 1])) for k in range(len(ids))]
    assert closed_at == (None if end is None else next(k for k, n in enumerate(prefix) if n >= end))


def test_stop_at_balanced_brace(backend, smollm2, gsm8k_items):
    """The answer ends at the brace closing the box (nested groups counted) or when the budget runs out."""
    pairs = [probe_pair(it) for it in gsm8k_items[:3]]
    got = backend.generate([p.generate for p in pairs])
    free = smollm2.generate([probe_pair(it, stop_at="eos").generate for it in gsm8k_items[:3]])
    closed = 0
    for g, f in zip(got, free):
        cut = balanced_close(f.text, 1)
        if cut is None:
            assert (g.text, g.n_tokens, g.finish_reason) == (f.text, f.n_tokens, f.finish_reason)
        else:
            closed += 1
            assert (g.text, g.finish_reason, g.stop_reason) == (f.text[:cut], "stop", "}")
            assert g.n_tokens < f.n_tokens and g.text.count("}") >= 2  # an inner group closed first
    assert 0 < closed < len(pairs)


def test_stop_at_numeric_box(backend, smollm2, gsm8k_items):
    """``numeric_box`` is the balanced-brace stop that also ends where the box opens with a word: the answer is
    the free answer cut at that token. vLLM stops at the brace only (documented), so its answer is the brace one."""
    items = gsm8k_items[:6]
    got = backend.generate([probe_pair(it, stop_at="numeric_box").generate for it in items])
    braced = smollm2.generate([probe_pair(it).generate for it in items])
    free = smollm2.generate([probe_pair(it, stop_at="eos").generate for it in items])
    worded = 0
    for g, b, f in zip(got, braced, free):
        ids = smollm2.tokenizer(f.text, add_special_tokens=False).input_ids
        k = word_stop(ids, smollm2.decode_ids)
        cut = smollm2.decode_ids(ids[:k]) if k is not None else None
        if type(backend).__name__ == "VLLMBackend" or cut is None or balanced_close(cut, 1) is not None:
            assert (g.text, g.finish_reason, g.stop_reason) == (b.text, b.finish_reason, b.stop_reason)
        else:
            worded += 1
            assert (g.text, g.finish_reason, g.stop_reason) == (cut, "stop", "word")
            assert g.n_tokens < f.n_tokens
    assert worded > 0 or type(backend).__name__ == "VLLMBackend"


def test_numeric_box_stop_changes_no_grade(smollm2, gsm8k_items):
    """The probe grades a worded box as not graded whether or not decoding stopped at the word."""
    from zcp_core.probe import ProbeConfig
    from zcp_core.probe.measure import grade_zero_cot

    items = gsm8k_items[:12]
    cfg = ProbeConfig()
    short = smollm2.generate([probe_pair(it, 32, stop_at="numeric_box").generate for it in items])
    full = smollm2.generate([probe_pair(it, 32).generate for it in items])
    stopped = 0
    for it, a, b in zip(items, short, full):
        ga, gb = grade_zero_cot(a.text, it.answer, cfg), grade_zero_cot(b.text, it.answer, cfg)
        assert (ga[2] in NOT_GRADED, ga[3]) == (gb[2] in NOT_GRADED, gb[3])
        stopped += a.stop_reason == "word"
    assert stopped > 0


def test_api_client_continues_until_balanced(api_server, smollm2, gsm8k_items):
    """Against a server that only stops at "}" (any vLLM), the client continues until the box balances."""
    from zcp_core.backends import OpenAIBackend

    calls: list[str] = []

    class PlainServer(OpenAIBackend):
        is_zcp_serve = False  # the real zcp serve, addressed as any OpenAI-compatible server

        def _complete(self, prompt, r, extra_body=None):
            calls.append(prompt)
            return super()._complete(prompt, r, extra_body)

    reqs = [probe_pair(it).generate for it in gsm8k_items[:3]]
    got = PlainServer(api_server.url, "smollm2").generate(reqs)
    assert got == smollm2.generate(reqs)
    assert len(calls) > len(reqs)  # the nested \text{...} closed first: one answer took two requests


def test_generate_score_is_one_prefill_and_equals_separate_calls(backend, smollm2, gsm8k_items, count_prefill_rows):
    """P_first/P_all come from the forward pass that starts the answer: one prefill row per item."""
    pairs = [probe_pair(it) for it in gsm8k_items[:4]]
    assert backend.supports_logprobs  # capability probes (a one-row echo) run here, not in the counted call
    count_prefill_rows.clear()
    both = generate_and_score(backend, pairs)
    fused_rows = sum(count_prefill_rows)
    count_prefill_rows.clear()
    gens = smollm2.generate([p.generate for p in pairs])
    scores = smollm2.score([p.score for p in pairs])
    separate_rows = sum(count_prefill_rows)
    for b, g, s in zip(both, gens, scores):
        assert b.completion == g
        assert b.logprobs.tokens == s.tokens
        assert max(abs(x - y) for x, y in zip(b.logprobs.logprobs, s.logprobs)) <= 1e-4
    if backend.name in ("transformers", "openai"):  # the in-process model, directly or behind zcp serve
        assert (fused_rows, separate_rows) == (len(pairs), 2 * len(pairs))


@pytest.mark.parametrize(("lens", "max_rows", "groups"), [
    ([100, 100, 100, 100], 16, [(0, 4)]),
    ([100, 100, 100, 100], 3, [(0, 3), (3, 1)]),                 # at most max_rows rows
    ([172, 167, 133, 128, 128, 122], 16, [(0, 4), (4, 2)]),      # 5 x 172 = 860 > 1.15 x 728 real tokens
    ([200, 50], 16, [(0, 1), (1, 1)]),
    ([50, 200], 16, [(0, 1), (1, 1)]),                            # unsorted: padding counts to the longest row
    ([10], 4, [(0, 1)]), ([], 4, []),
])
def test_prefill_groups_golden(lens, max_rows, groups):
    from zcp_core.backends.hf_decode import prefill_groups

    assert prefill_groups(lens, max_rows) == groups


def test_greedy_generate_equals_transformers_generate(smollm2, gsm8k_items):
    """Greedy ``generate`` runs the shared-prefill decoder; ``transformers``' own ``generate`` is the truth.

    Rows of unequal prompt and answer length share one decoding batch, so rows that finish early leave it
    while others run on; each truth is computed alone (batch of one, no padding).
    """
    reqs = [probe_pair(it, 16, constraint=c).generate for it in gsm8k_items[:3] for c in ("none", "number")]
    reqs += [probe_pair(it, 16, stop_at="numeric_box").generate for it in gsm8k_items[:3]]
    reqs.append(GenerateRequest(prompt="Question: What is 12 plus 30?\nAnswer:", params=SamplingParams(max_new_tokens=9)))
    got = smollm2.generate(reqs)
    truth = [smollm2._generate_batch([r], [smollm2.render(r)])[0] for r in reqs]  # transformers' generate()
    assert got == truth
    assert {c.finish_reason for c in got} == {"stop", "length"} and any(c.stop_reason == "}" for c in got)
    assert any(c.stop_reason == "word" for c in got)


def test_lookup_drafts_keep_greedy_output(smollm2, gsm8k_items, monkeypatch):
    """GSM8K item 11 writes a runaway ``0.000…`` under the number constraint while its batch-mates close their box:
    the tail then decodes with lookup drafts, takes fewer steps than tokens, and still equals generate()."""
    import zcp_core.backends.hf_steps as steps

    widths: list[int] = []
    forward = smollm2.model.forward

    def spied(*args, **kwargs):
        if kwargs.get("cache") is not None:
            widths.append(int(kwargs["input_ids"].shape[1]))
        return forward(*args, **kwargs)

    monkeypatch.setattr(smollm2.model, "forward", spied)
    reqs = [probe_pair(it, 32, constraint="number").generate for it in gsm8k_items[8:12]]
    got = smollm2.generate(reqs)
    monkeypatch.setattr(smollm2.model, "forward", forward)
    assert (got[2].text, got[2].finish_reason) == ("0." + "0" * 30, "length")
    assert all(c.stop_reason == "}" for k, c in enumerate(got) if k != 2)
    assert got == [smollm2._generate_batch([r], [smollm2.render(r)])[0] for r in reqs]
    assert steps.LOOKUP + 1 in widths and len(widths) < 31  # drafts ran; fewer steps than the runaway's tokens


@pytest.mark.parametrize(("context", "k", "draft"), [
    ([5, 0, 0, 0], 3, [0]),                   # (0, 0) occurred once before, with one token after it
    ([1, 2, 3, 9, 1, 2], 2, [3, 9]),          # the longest suffix (1, 2) wins
    ([7, 1, 2, 8, 2], 2, [8, 2]),             # (8, 2) never occurred: the last token 2 did, before 8
    ([1, 2, 3], 4, []),                       # nothing repeats
    ([4], 2, []), ([], 2, []),
    ([3, 3, 3, 3, 3], 8, [3, 3]),             # no occurrence has 8 after it: the one with the most
    ([9] + [0] * 12, 4, [0, 0, 0, 0]),        # a run: the latest occurrence with k tokens after it
    ([1, 5, 6, 2, 1, 5, 7, 3, 1, 5], 2, [7, 3]),  # the latest occurrence with k after it, not the first
])
def test_ngram_draft_golden(context, k, draft):
    from zcp_core.backends.hf_steps import ngram_draft

    assert ngram_draft(context, k) == draft


def test_generate_score_shares_cache_entries(backend, gsm8k_items, tmp_path):
    cached = with_cache(backend, tmp_path / "responses.sqlite")
    pairs = [probe_pair(it, budget=4) for it in gsm8k_items[:2]]
    both = generate_and_score(cached, pairs)
    hits = cached.cache.hits
    assert cached.generate([p.generate for p in pairs]) == [b.completion for b in both]
    assert cached.score([p.score for p in pairs]) == [b.logprobs for b in both]
    assert cached.cache.hits == hits + 4


# ---- the number constraint: a boxed answer holds a number, never a derivation -----------------------
NUMBER = set("0123456789.,-/ ")


@pytest.mark.parametrize(("text", "ok"), [
    ("7", True), (" 18", True), ("1,234.5", True), ("-3", True), ("1/2", True), ("..", True), (" ", True),
    ("   ", True), ("}", True), ("}\n", True), ("} ", True), ("}\n\n", True),
    ("", False), ("x", False), (" 18x", False), ("{", False), ("\\", False), ("}}", False), ("},", False),
    ("}.", False), (" }", False), ("18}", False), ("\n", False), ("$", False), ("+", False), ("%", False),
    ("\ufffd", False), ("<|im_end|>", False), ("\u0661", False),  # only ASCII digits
])
def test_number_token_ok_golden(text, ok):
    assert number_token_ok(text) is ok


def test_allowed_token_ids_of_the_embedded_tokenizer(smollm2):
    tok = smollm2.tokenizer
    ids = allowed_token_ids(tok)
    assert ids == sorted(set(ids)) and tok.eos_token_id in ids
    assert all(number_token_ok(tok.decode([i])) for i in ids if i != tok.eos_token_id)
    assert {tok.convert_tokens_to_ids(c) for c in "0123456789}"} <= set(ids)
    assert not {tok.convert_tokens_to_ids(c) for c in "{\\x"} & set(ids)
    with pytest.raises(ValueError, match="every token"):
        allowed_token_ids(tok, "none")


def test_constraint_none_keeps_the_cache_keys_of_before():
    """Keys written before ``constraint`` existed stay valid (golden values from the previous code)."""
    plain = GenerateRequest(prompt="x")
    boxed = GenerateRequest(messages=chat("q"), prefill="\\boxed{",
                            params=SamplingParams(max_new_tokens=32, stop_at="balanced_brace"))
    assert request_key("generate", "transformers", "m", "r", plain) == (
        "bebb1cc240f10e3bb9e742d0c82b34a940c920b0f126efac03a407c9cc930418")
    assert request_key("generate", "transformers", "m", "r", boxed) == (
        "09e48f866527d4dd21df736d4aab70f15d21695a052b2aa0ccae8f00734a4951")
    numbered = GenerateRequest(messages=boxed.messages, prefill=boxed.prefill,
                               params=SamplingParams(max_new_tokens=32, stop_at="balanced_brace", constraint="number"))
    assert request_key("generate", "transformers", "m", "r", numbered) != request_key(
        "generate", "transformers", "m", "r", boxed)


def test_number_constraint_boxes_a_number(backend, smollm2, gsm8k_items):
    """Only number tokens in the box, then its brace or the budget; the fused call equals generate and score."""
    budget = 12
    pairs = [probe_pair(it, budget, constraint="number") for it in gsm8k_items[:3]]
    got = backend.generate([p.generate for p in pairs])
    for c in got:
        closed = (c.finish_reason, c.stop_reason) == ("stop", "}") and c.text.endswith("}")
        assert closed or (c.finish_reason, c.n_tokens) == ("length", budget)
        assert set(c.text[:-1] if closed else c.text) <= NUMBER
    assert sum(c.stop_reason == "}" for c in got) >= 2
    if backend.name == "transformers":  # unconstrained, the same model writes a derivation into the box
        free = backend.generate([probe_pair(it, budget).generate for it in gsm8k_items[:3]])
        assert any(not set(f.text) <= NUMBER | {"}"} for f in free)
    else:
        ref = smollm2.generate([p.generate for p in pairs])
        assert [(c.text, c.n_tokens, c.finish_reason, c.stop_reason) for c in got] == [
            (c.text, c.n_tokens, c.finish_reason, c.stop_reason) for c in ref]
    both = generate_and_score(backend, pairs)
    scores = smollm2.score([p.score for p in pairs])  # never masked: the model's own probabilities
    for b, g, s in zip(both, got, scores):
        assert b.completion == g
        assert b.logprobs.tokens == s.tokens
        assert max(abs(x - y) for x, y in zip(b.logprobs.logprobs, s.logprobs)) <= 1e-4


def test_constraints_never_share_a_mask(backend, gsm8k_items):
    """One call mixing constrained and free requests answers each as its own call would."""
    items = gsm8k_items[3:5]
    pairs = [probe_pair(it, 6, constraint=c) for it in items for c in ("number", "none")]
    mixed = backend.generate([p.generate for p in pairs])
    alone = [backend.generate([p.generate])[0] for p in pairs]
    assert mixed == alone
    assert [b.completion for b in generate_and_score(backend, pairs)] == alone
    assert any(a.text != b.text for a, b in zip(alone[::2], alone[1::2]))  # the constraint changed an answer


def test_constrained_generation_logprobs_are_unmasked(smollm2, gsm8k_items):
    """Generated-token logprobs under a constraint are the model's raw ones, as teacher forcing gives them."""
    pair = probe_pair(gsm8k_items[0], 8, constraint="number")
    (c,) = smollm2.generate([GenerateRequest(messages=pair.generate.messages, prefill=SUFFIX, thinking="off",
                                             params=pair.generate.params, logprobs=True)])
    (s,) = smollm2.score([ScoreRequest(messages=pair.score.messages, prefill=SUFFIX, thinking="off",
                                       continuation=c.text)])
    assert c.tokens == s.tokens and c.logprobs == pytest.approx(s.logprobs, abs=1e-4)


def test_api_client_sends_constraints_only_to_zcp_serve(api_server):
    from zcp_core.backends import OpenAIBackend

    class PlainServer(OpenAIBackend):
        is_zcp_serve = False  # the real zcp serve, addressed as any OpenAI-compatible server

    zcp, plain = OpenAIBackend(api_server.url, "smollm2"), PlainServer(api_server.url, "smollm2")
    assert zcp.supports_constraints and not plain.supports_constraints
    req = GenerateRequest(prompt="x = \\boxed{", params=SamplingParams(max_new_tokens=2, constraint="number"))
    with pytest.raises(ValueError, match="zcp serve"):
        plain.generate([req])
    with pytest.raises(ValueError, match="zcp serve"):
        generate_and_score(plain, [GenerateScoreRequest(req, ScoreRequest(prompt="x = \\boxed{", continuation="1"))])
    assert plain.generate([GenerateRequest(prompt="x = \\boxed{", params=SamplingParams(max_new_tokens=2))])
