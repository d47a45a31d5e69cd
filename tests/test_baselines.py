"""Membership-inference baselines: golden tables for Min-K% Prob and the zlib ratio, the real model, the CLI."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from zcp_core.baselines import (
    NO_TEXT,
    NO_TOKEN,
    RECORD_COLUMNS,
    BaselineConfig,
    baseline_scores,
    min_k_count,
    min_k_prob,
    score_items,
    zlib_bytes,
    zlib_ratio,
)

ROOT = Path(__file__).resolve().parent.parent
GSM8K = ROOT / "data" / "gsm8k" / "test.jsonl"


# ---- golden tables (hand-computed) -----------------------------------------------------------
@pytest.mark.parametrize(("n", "k", "want"), [
    (0, 0.2, 0),    # nothing to average
    (1, 0.2, 1),    # floor(0.2) = 0, kept at 1
    (4, 0.2, 1),    # floor(0.8) = 0, kept at 1
    (5, 0.2, 1),
    (10, 0.2, 2),
    (34, 0.2, 6),   # floor(6.8)
    (10, 0.3, 3),   # 0.3 * 10 is 3.0000000000000004 in floats: still 3
    (10, 0.7, 7),   # 0.7 * 10 is 7.000000000000001
    (7, 1.0, 7),
])
def test_min_k_count_golden(n, k, want):
    assert min_k_count(n, k) == want


@pytest.mark.parametrize(("logprobs", "k", "want"), [
    ([-1.0, -2.0, -3.0, -4.0, -5.0], 0.2, -5.0),                # one token: the lowest
    ([-5.0, -1.0, -4.0, -2.0, -3.0], 0.2, -5.0),                # order does not matter
    ([-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0], 0.2, -9.5),  # (-10 - 9) / 2
    ([-0.5, -0.1, -3.0, -2.0], 0.5, -2.5),                      # (-3 - 2) / 2
    ([-2.0], 0.2, -2.0),
    ([-1.0, -2.0, -6.0], 1.0, -3.0),                            # k = 100%: the mean
    ([-0.25, -0.25, -0.75, -0.75], 0.5, -0.75),                 # ties
])
def test_min_k_prob_golden(logprobs, k, want):
    assert min_k_prob(logprobs, k) == pytest.approx(want)


def test_min_k_prob_of_nothing_is_nan_not_zero():
    assert math.isnan(min_k_prob([], 0.2))


@pytest.mark.parametrize(("text", "want"), [
    ("", 8),   # 2-byte header + 2 bytes of deflate (3-bit block header + 7-bit end code) + 4-byte Adler-32
    ("a", 9),  # ... + one fixed-Huffman literal (8 bits): 18 bits -> 3 bytes of deflate
])
def test_zlib_bytes_golden(text, want):
    assert zlib_bytes(text) == want


def test_zlib_bytes_counts_compressed_utf8_bytes():
    assert zlib_bytes("ab" * 100) < 30 < len("ab" * 100)  # repetitive text compresses
    assert zlib_bytes("é") == zlib_bytes("ab")  # two UTF-8 bytes each: same deflate length (18 + 8 bits -> 4)


@pytest.mark.parametrize(("logprobs", "n_bytes", "want"), [
    ([-1.0, -2.0, -3.0], 10, -0.2),  # mean -2 over 10 bytes
    ([-4.0], 8, -0.5),
    ([-0.5, -1.5], 4, -0.25),
])
def test_zlib_ratio_golden(logprobs, n_bytes, want):
    assert zlib_ratio(logprobs, n_bytes) == pytest.approx(want)


def test_zlib_ratio_edge_cases():
    assert math.isnan(zlib_ratio([], 9))
    with pytest.raises(ValueError, match="positive"):
        zlib_ratio([-1.0], 0)


def test_baseline_scores_golden():
    s = baseline_scores([-1.0, -2.0, -3.0, -4.0, -10.0], "a", BaselineConfig(k=0.2))
    assert (s.n_tokens, s.n_min_k, s.zlib_bytes) == (5, 1, 9)
    assert s.mean_logprob == pytest.approx(-4.0)
    assert s.min_k == pytest.approx(-10.0)
    assert s.zlib == pytest.approx(-4.0 / 9)


def test_higher_means_member_for_both_scores():
    """A text the model finds likelier (every logprob higher) scores higher on both baselines."""
    seen = baseline_scores([-0.1, -0.2, -0.5, -1.0, -0.3], "same text")
    unseen = baseline_scores([-1.1, -2.2, -2.5, -4.0, -1.3], "same text")
    assert seen.min_k > unseen.min_k and seen.zlib > unseen.zlib


@pytest.mark.parametrize("k", [0.0, -0.1, 1.5])
def test_config_rejects_bad_k(k):
    with pytest.raises(ValueError, match="k must be"):
        BaselineConfig(k=k)


# ---- a backend that cannot score: NaN with the reason, never 0 -------------------------------
class NoEchoAPI(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that refuses echo (as hosted APIs do)."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        data = json.dumps({"error": {"message": "echo is not supported with this model"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_backend_without_logprobs_gives_nan_with_its_reason():
    from zcp_core.backends import OpenAIBackend
    from zcp_core.schema import Item

    srv = ThreadingHTTPServer(("127.0.0.1", 0), NoEchoAPI)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        backend = OpenAIBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "fake", backoff_s=0.01)
        items = [Item("a", "Tom has 3 apples.", "3"), Item("b", "", "1")]
        df = score_items(backend, items)
    finally:
        srv.shutdown()
        srv.server_close()
    assert list(df.columns) == list(RECORD_COLUMNS) and list(df["id"]) == ["a", "b"]
    assert df[["min_k", "zlib", "mean_logprob"]].isna().all().all()
    assert "prompt logprobs" in df.loc[0, "logprob_reason"] and df.loc[1, "logprob_reason"] == NO_TEXT
    assert list(df["n_tokens"]) == [0, 0]


# ---- the real embedded model -------------------------------------------------------------------
@pytest.mark.model
def test_score_items_on_the_real_model_keeps_order_and_equals_a_direct_score(smollm2, gsm8k_items):
    from zcp_core.backends import ScoreRequest
    from zcp_core.schema import Item

    items = list(gsm8k_items[:4])
    odd = [Item("one-token", "Hi", "0"), Item("empty", "", "0")]
    cfg = BaselineConfig()
    df = score_items(smollm2, [*items, *odd], cfg)
    assert list(df.columns) == list(RECORD_COLUMNS)
    assert list(df["id"]) == [it.id for it in [*items, *odd]]

    real = df.iloc[:4]
    assert (real["logprob_reason"] == "").all() and (real["n_tokens"] > 10).all()
    for col in ("mean_logprob", "min_k", "zlib"):
        assert real[col].map(math.isfinite).all() and (real[col] < 0).all(), col
    assert (real["min_k"] < real["mean_logprob"]).all()  # the lowest 20% lie below the mean

    direct = smollm2.score([ScoreRequest(prompt="", continuation=it.question) for it in items])
    close = {"rel": 1e-5}  # another batch shape rounds float32 logits slightly differently
    for (_, row), it, tl in zip(real.iterrows(), items, direct):
        want = baseline_scores(tl.logprobs, it.question, cfg)
        assert row["n_tokens"] == len(tl.logprobs) == want.n_tokens
        assert row["min_k"] == pytest.approx(want.min_k, **close) and row["zlib"] == pytest.approx(want.zlib, **close)
        assert row["min_k"] == pytest.approx(min_k_prob(tl.logprobs, 0.2), **close)
        assert row["zlib"] == pytest.approx(sum(tl.logprobs) / len(tl.logprobs) / zlib_bytes(it.question), **close)

    assert df.loc[4, "logprob_reason"] == NO_TOKEN and df.loc[5, "logprob_reason"] == NO_TEXT
    assert df.iloc[4:][["min_k", "zlib"]].isna().all().all()

    rev = score_items(smollm2, items[::-1], cfg)  # another order: the same rows, in that order
    assert list(rev["id"]) == [it.id for it in items[::-1]]
    assert list(rev["min_k"]) == pytest.approx(list(real["min_k"])[::-1], **close)


@pytest.mark.model
def test_cli_writes_a_baselines_run(tmp_path, capsys, gsm8k_items):
    from zcp_core.cli.main import main
    from zcp_core.runs import load_run, sha256_file

    out = tmp_path / "run"
    rc = main(["baselines", "--model", "smollm2", "--dataset", str(GSM8K), "--limit", "3", "--out", str(out),
               "--device", "cpu", "--no-cache", "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["n"], summary["n_scored"], summary["n_unavailable"]) == (3, 3, 0)
    assert summary["config"] == {"k": 0.2} and summary["headline"]["value"] == pytest.approx(summary["min_k_mean"])

    run = load_run(out)
    assert run.kind == "baselines" and run.manifest["model"] == "smollm2" and run.manifest["model_revision"]
    assert run.manifest["datasets"] == [{"path": str(GSM8K), "sha256": sha256_file(GSM8K)}]
    assert run.manifest["config"]["limit"] == 3 and run.manifest["config"]["k"] == 0.2
    assert run.manifest["tables"] == ["records"] and run.summary == summary
    rec = run.records
    assert list(rec.columns) == list(RECORD_COLUMNS)
    assert list(rec["id"]) == [it.id for it in gsm8k_items[:3]]
    assert rec["min_k"].map(math.isfinite).all() and rec["zlib"].map(math.isfinite).all()
    assert summary["min_k_mean"] == pytest.approx(rec["min_k"].mean())


def test_cli_refuses_a_bad_k_before_loading_a_model(tmp_path, capsys):
    from zcp_core.cli.main import main

    rc = main(["baselines", "--dataset", str(GSM8K), "--out", str(tmp_path / "r"), "--k", "0"])
    assert rc == 1 and "k must be in (0, 1]" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
