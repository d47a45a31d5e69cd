"""``zcp serve`` endpoints and the OpenAI client's edge cases.

Endpoint tests run the real server over the real SmolLM2 on 127.0.0.1. The
client's retry, refusal and key-handling paths run against a tiny stdlib
HTTP server that imitates a hosted API (429s, no echo, no /tokenize).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from zcp_core.backends import (
    GenerateRequest,
    OpenAIBackend,
    SamplingParams,
    ScoreRequest,
    chat,
    continuation_span,
    retry_delay,
    split_base_url,
)
from zcp_core.errors import BackendUnavailable, ZcpError
from zcp_core.serve import ApiError, sampling_params, thinking_of, token_strings

ROOT = Path(__file__).resolve().parent.parent


# ---- pure functions: golden tables ------------------------------------------------------------
@pytest.mark.parametrize("url, expected", [
    ("http://127.0.0.1:8000", ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000")),
    ("http://127.0.0.1:8000/v1/", ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000")),
    ("https://api.example.com/openai/v1", ("https://api.example.com/openai/v1", "https://api.example.com/openai")),
    ("https://host/api", ("https://host/api", "https://host/api")),
])
def test_split_base_url(url, expected):
    assert split_base_url(url) == expected


@pytest.mark.parametrize("tokens, continuation, start", [
    (["Hello", " world"], " world", 1),
    (["A", "B", " c", "d"], " cd", 2),
    (["A", "B", " c", "d"], "d", 3),
    (["A", "B", " c", "d"], "cd", 2),         # a token straddling the boundary counts as continuation
    (["caf", "\ufffd", "\ufffd", " 2"], " 2", 3),  # mis-measured bytes earlier in the context do not shift it
    (["x"], "x", 1),                          # the first token is never scored (nothing precedes it)
])
def test_continuation_span(tokens, continuation, start):
    assert continuation_span(tokens, continuation) == start


def _status_error(status: int, headers: dict[str, str] | None = None):
    import httpx

    req = httpx.Request("POST", "http://127.0.0.1/v1/completions")
    return httpx.HTTPStatusError("x", request=req, response=httpx.Response(status, headers=headers, request=req))


@pytest.mark.parametrize("exc, attempt, low, high", [
    (_status_error(429), 0, 0.5, 0.55),
    (_status_error(503), 2, 2.0, 2.2),
    (_status_error(429, {"retry-after": "3"}), 0, 3.0, 3.3),
    (_status_error(400), 0, None, None),
    (_status_error(404), 3, None, None),
    (ValueError("bug"), 0, None, None),
])
def test_retry_delay(exc, attempt, low, high):
    d = retry_delay(exc, attempt, backoff_s=0.5)
    assert d is None if low is None else low <= d <= high


def test_retry_delay_timeouts_are_retried():
    import httpx

    assert retry_delay(httpx.ReadTimeout("slow"), 1, 0.5) == pytest.approx(1.0, rel=0.11)


@pytest.mark.parametrize("body, expected", [
    ({"max_tokens": 0, "temperature": 0}, SamplingParams(max_new_tokens=0, temperature=0.0)),
    ({"max_tokens": 5, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "seed": 3, "stop": "\n"},
     SamplingParams(5, 0.7, 0.9, 40, 3, ("\n",))),
    ({"max_completion_tokens": 7, "temperature": 0, "top_k": -1, "stop": ["a", "b"]},
     SamplingParams(max_new_tokens=7, temperature=0.0, stop=("a", "b"))),
    ({"temperature": 0}, SamplingParams(max_new_tokens=16, temperature=0.0)),
    ({"temperature": 0, "stop_at": "balanced_brace"}, SamplingParams(16, 0.0, stop_at="balanced_brace")),
    ({"temperature": 0, "constraint": "number"}, SamplingParams(16, 0.0, constraint="number")),
])
def test_sampling_params(body, expected):
    assert sampling_params(body, default_max=16) == expected


def test_sampling_params_rejects_n_and_draws_seeds():
    with pytest.raises(ApiError):
        sampling_params({"n": 2}, 16)
    with pytest.raises(ApiError, match="stop_at"):
        sampling_params({"stop_at": "newline"}, 16)
    with pytest.raises(ApiError, match="constraint"):
        sampling_params({"constraint": "letters"}, 16)
    seeds = {sampling_params({"temperature": 1.0}, 16).seed for _ in range(5)}
    assert len(seeds) > 1  # unseeded sampling is not silently fixed


@pytest.mark.parametrize("body, mode", [
    ({}, "auto"), ({"chat_template_kwargs": {"enable_thinking": False}}, "off"),
    ({"chat_template_kwargs": {"enable_thinking": True}}, "on"), ({"chat_template_kwargs": {}}, "auto"),
])
def test_thinking_of(body, mode):
    assert thinking_of(body) == mode


@pytest.mark.parametrize("text", ["Hello world", "café — 12€ ok", "<|im_start|>user\nhi"])
def test_token_strings_rebuild_the_text(smollm2, text):
    ids = smollm2.tokenizer(text, add_special_tokens=False).input_ids
    strs = token_strings(smollm2.tokenizer, ids)
    assert len(strs) == len(ids) and "".join(strs) == text


# ---- the real server ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(smollm2):
    from zcp_core.serve import BackgroundServer, ServerConfig

    with BackgroundServer(smollm2, ServerConfig(served_model_name="smollm2")) as srv:
        yield srv


def post(server, path: str, body: dict) -> tuple[int, dict]:
    import httpx

    root = server.url[: -len("/v1")]
    r = httpx.post(root + path, json=body, timeout=120)
    return r.status_code, r.json()


def test_models_and_tokenize_roundtrip(server, smollm2):
    import httpx

    models = httpx.get(server.url + "/models").json()
    assert models["data"][0]["id"] == "smollm2" and models["data"][0]["revision"] == smollm2.revision
    msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "The answer"}]
    rendered = {
        "gen": smollm2.render(GenerateRequest(messages=chat("Hi"))),
        "cont": smollm2.render(GenerateRequest(messages=chat("Hi"), prefill="The answer")),
        "bare": smollm2.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=False),
    }
    bodies = {
        "gen": {"messages": msgs[:1]},
        "cont": {"messages": msgs, "continue_final_message": True, "add_generation_prompt": False},
        "bare": {"messages": msgs, "add_generation_prompt": False},
    }
    for name, body in bodies.items():
        status, tok = post(server, "/tokenize", {"model": "smollm2", **body})
        assert status == 200 and tok["count"] == len(tok["tokens"])
        _, detok = post(server, "/detokenize", {"model": "smollm2", "tokens": tok["tokens"]})
        assert detok["prompt"] == rendered[name], name
    _, tok = post(server, "/tokenize", {"prompt": "café 12€", "return_token_strs": True})
    assert tok["tokens"] == smollm2.tokenizer("café 12€", add_special_tokens=False).input_ids
    assert len(tok["token_strs"]) == tok["count"]


def test_completions_echo_scores_the_prompt(server, smollm2):
    prompt = "Question: 2 + 3 = ?\nAnswer: 5"
    status, out = post(server, "/v1/completions", {"model": "smollm2", "prompt": prompt, "max_tokens": 0,
                                                   "echo": True, "logprobs": 0})
    assert status == 200
    ch = out["choices"][0]
    lp = ch["logprobs"]
    assert ch["text"] == prompt and "".join(lp["tokens"]) == prompt
    assert lp["token_logprobs"][0] is None
    assert lp["text_offset"] == [sum(len(t) for t in lp["tokens"][:k]) for k in range(len(lp["tokens"]))]
    ref = smollm2.score([ScoreRequest(prompt="", continuation=prompt)])[0]
    assert lp["token_logprobs"][1:] == pytest.approx(list(ref.logprobs), abs=1e-4)
    assert out["usage"]["prompt_tokens"] == len(lp["tokens"]) and out["usage"]["completion_tokens"] == 0


def test_completions_list_prompt_is_one_batch(server, smollm2):
    prompts = ["One, two,", "The sky is"]
    _, out = post(server, "/v1/completions", {"prompt": prompts, "max_tokens": 3, "temperature": 0})
    local = smollm2.generate([GenerateRequest(prompt=p, params=SamplingParams(max_new_tokens=3)) for p in prompts])
    assert [c["index"] for c in out["choices"]] == [0, 1]
    assert [c["text"] for c in out["choices"]] == [c.text for c in local]


def test_chat_continue_final_message_is_a_prefill(server, smollm2):
    body = {"model": "smollm2", "max_tokens": 4, "temperature": 0, "logprobs": True,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Name the capital of France."}]},
                         {"role": "assistant", "content": "The capital of France is"}],
            "continue_final_message": True, "add_generation_prompt": False,
            "chat_template_kwargs": {"enable_thinking": False}}
    status, out = post(server, "/v1/chat/completions", body)
    (local,) = smollm2.generate([GenerateRequest(messages=chat("Name the capital of France."),
                                                 prefill="The capital of France is", thinking="off",
                                                 params=SamplingParams(max_new_tokens=4), logprobs=True)])
    assert status == 200
    ch = out["choices"][0]
    assert ch["message"]["content"] == local.text and ch["finish_reason"] == local.finish_reason
    assert [c["token"] for c in ch["logprobs"]["content"]] == list(local.tokens)


def test_top_logprobs_alternatives(server):
    body = {"messages": [{"role": "user", "content": "What is 2+2?"}], "max_tokens": 3, "temperature": 0,
            "logprobs": True, "top_logprobs": 3}
    _, out = post(server, "/v1/chat/completions", body)
    for c in out["choices"][0]["logprobs"]["content"]:
        assert len(c["top_logprobs"]) == 3
        best = c["top_logprobs"][0]  # greedy: the chosen token is the most likely one
        assert best["token"] == c["token"] and best["logprob"] == pytest.approx(c["logprob"], abs=1e-4)
    _, out = post(server, "/v1/completions", {"prompt": "One, two,", "max_tokens": 2, "temperature": 0,
                                              "echo": True, "logprobs": 2})
    lp = out["choices"][0]["logprobs"]
    assert lp["top_logprobs"][0] is None and len(lp["top_logprobs"]) == len(lp["tokens"])
    for t, v, alts in zip(lp["tokens"][1:], lp["token_logprobs"][1:], lp["top_logprobs"][1:]):
        assert alts[t] == v and 2 <= len(alts) <= 3
    for v, alts in zip(lp["token_logprobs"][-2:], lp["top_logprobs"][-2:]):  # generated greedily
        assert max(alts.values()) == pytest.approx(v, abs=1e-4)


def test_concurrent_requests_are_batched_safely(server, smollm2):
    from concurrent.futures import ThreadPoolExecutor

    prompts = [f"Item {i}: the colour of the sky is" for i in range(6)]
    calls = [("/v1/completions", {"prompt": p, "max_tokens": 2, "temperature": 0}) for p in prompts]
    calls += [("/tokenize", {"prompt": p}) for p in prompts]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda c: post(server, *c), calls))
    assert all(status == 200 for status, _ in got)
    local = smollm2.generate([GenerateRequest(prompt=p, params=SamplingParams(max_new_tokens=2)) for p in prompts])
    assert [out["choices"][0]["text"] for _, out in got[:6]] == [c.text for c in local]
    assert [out["count"] for _, out in got[6:]] == [len(smollm2.tokenizer(p).input_ids) for p in prompts]


def test_completions_zcp_extensions_stop_on_balance_and_score_in_the_same_call(server, smollm2):
    from zcp_core.backends import GenerateScoreRequest, generate_and_score

    prompt = smollm2.render(GenerateRequest(messages=chat("Write one half in LaTeX."), prefill="It is \\boxed"))
    body = {"prompt": prompt, "max_tokens": 24, "temperature": 0, "stop_at": "balanced_brace",
            "zcp_score": {"prompt": prompt + "{", "continuation": "\\frac{1}{2}"}}
    status, out = post(server, "/v1/completions", body)
    gen = GenerateRequest(prompt=prompt, params=SamplingParams(24, stop_at="balanced_brace"))
    (ref,) = generate_and_score(smollm2, [GenerateScoreRequest(gen, ScoreRequest(prompt=prompt + "{",
                                                                                 continuation="\\frac{1}{2}"))])
    ch = out["choices"][0]
    assert status == 200 and ch["text"] == ref.completion.text and ch["stop_reason"] == ref.completion.stop_reason
    assert ch["zcp_score"]["tokens"] == list(ref.logprobs.tokens) and ch["zcp_score"]["available"]
    assert ch["zcp_score"]["logprobs"] == pytest.approx(list(ref.logprobs.logprobs), abs=1e-4)


@pytest.mark.parametrize("path, body, status", [
    ("/v1/completions", {"model": "other", "prompt": "x"}, 404),
    ("/v1/completions", {"prompt": "x", "n": 2}, 400),
    ("/v1/completions", {"prompt": "x", "stream": True}, 400),
    ("/v1/completions", {"prompt": 3}, 400),
    ("/v1/chat/completions", {"messages": [{"role": "tool", "content": "x"}]}, 400),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "continue_final_message": True}, 400),
    ("/tokenize", {}, 400),
    ("/v1/completions", {"prompt": "x", "zcp_score": {"prompt": "x"}}, 400),
    ("/v1/completions", {"prompt": ["x", "y"], "zcp_score": {"prompt": "x", "continuation": "y"}}, 400),
    ("/detokenize", {"tokens": ["a"]}, 400),
])
def test_bad_requests_get_openai_errors(server, path, body, status):
    got, out = post(server, path, body)
    assert got == status and out["error"]["message"]


# ---- the client against an imitation hosted API ----------------------------------------------
class FakeAPI(BaseHTTPRequestHandler):
    """A hosted-API imitation: 429 twice on chat, no echo, no /tokenize, 503 for 'overloaded'."""

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "x"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        state = self.server.state  # type: ignore[attr-defined]
        state["auth"].append(self.headers.get("Authorization"))
        state["calls"][self.path] = state["calls"].get(self.path, 0) + 1
        if self.path == "/v1/chat/completions":
            content = body["messages"][-1]["content"]
            if content == "bad":
                return self._send(400, {"error": {"message": "unsupported parameter", "type": "invalid_request"}})
            if content == "overloaded" or state["calls"][self.path] <= 2:
                return self._send(429 if content != "overloaded" else 503,
                                  {"error": {"message": "slow down"}}, {"Retry-After": "0"})
            return self._send(200, {
                "id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                             "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})
        if self.path == "/v1/completions" and body.get("echo"):
            return self._send(400, {"error": {"message": "echo is not supported with this model"}})
        return self._send(404, {"error": {"message": "not found"}})


@pytest.fixture
def fake_api():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeAPI)
    srv.state = {"calls": {}, "auth": []}  # type: ignore[attr-defined]
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def fake_backend(srv, **kw) -> OpenAIBackend:
    return OpenAIBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "fake", api_key_env="ZCP_TEST_KEY",
                         backoff_s=0.01, **kw)


def test_client_retries_429_and_sends_key_without_showing_it(fake_api, monkeypatch, capsys):
    monkeypatch.setenv("ZCP_TEST_KEY", "sk-test-secret-123")
    b = fake_backend(fake_api)
    (c,) = b.generate([GenerateRequest(messages=chat("hi"), params=SamplingParams(max_new_tokens=2))])
    assert c.text == "hello" and c.n_tokens == 1 and c.finish_reason == "stop"
    assert fake_api.state["calls"]["/v1/chat/completions"] == 3  # two 429s, then success
    assert set(fake_api.state["auth"]) == {"Bearer sk-test-secret-123"}
    out = capsys.readouterr()
    assert "sk-test-secret" not in repr(b) + out.out + out.err


def test_client_does_not_retry_bad_requests_and_gives_up_on_persistent_5xx(fake_api, monkeypatch):
    monkeypatch.setenv("ZCP_TEST_KEY", "sk-test-secret-123")
    b = fake_backend(fake_api, max_retries=2)
    with pytest.raises(ZcpError, match="unsupported parameter") as err:
        b.generate([GenerateRequest(messages=chat("bad"), params=SamplingParams(max_new_tokens=2))])
    assert fake_api.state["calls"]["/v1/chat/completions"] == 1 and "sk-test" not in str(err.value)
    with pytest.raises(ZcpError, match="503"):
        b.generate([GenerateRequest(messages=chat("overloaded"), params=SamplingParams(max_new_tokens=2))])
    assert fake_api.state["calls"]["/v1/chat/completions"] == 1 + 3  # first try + 2 retries


def test_client_reports_unavailable_scores_and_prefill(fake_api):
    b = fake_backend(fake_api)
    assert not b.supports_logprobs and not b.can_render
    lps = b.score([ScoreRequest(prompt="2+2=", continuation="4"), ScoreRequest(messages=chat("x"), continuation="y")])
    assert all(not lp.available and lp.logprobs == () and "echo" in lp.reason for lp in lps)
    with pytest.raises(BackendUnavailable, match="prefill"):
        b.generate([GenerateRequest(messages=chat("x"), prefill="The answer is")])


def test_client_unreachable_server_is_a_clear_error():
    from zcp_core.serve import free_port

    b = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=1, backoff_s=0.01)
    with pytest.raises(ZcpError, match="cannot reach .* after 1 retries"):
        b.generate([GenerateRequest(prompt="x")])
    with pytest.raises(ZcpError, match="cannot reach"):
        b.supports_logprobs  # noqa: B018 - a probe must not turn "unreachable" into "unsupported"


# ---- the CLI, as a user starts it -------------------------------------------------------------
def test_zcp_serve_cli_serves_the_embedded_model():
    import httpx

    from zcp_core.serve import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "zcp_core.cli.main", "serve", "--model", "smollm2", "--device", "cpu",
           "--no-cache", "--port", str(port), "--json"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        summary = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        assert summary["url"] == f"http://127.0.0.1:{port}/v1" and summary["spec"].endswith("#smollm2")
        deadline = time.monotonic() + 180
        while True:
            try:
                httpx.get(summary["url"] + "/models", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.5)
        client = OpenAIBackend(summary["url"], "smollm2")
        (lp,) = client.score([ScoreRequest(prompt="One, two,", continuation=" three")])
        assert lp.available and lp.tokens == (" three",) and lp.logprobs[0] < 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
