"""The embedded default model works offline, from Python and from the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from zcp_core.backends import GenerateRequest, SamplingParams, ScoreRequest, chat, converted_dir, gguf_path


def test_gguf_ships_in_package() -> None:
    p = gguf_path()
    assert p.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and p.stat().st_size > 50_000_000


def test_python_generate_and_score(smollm2) -> None:
    (c,) = smollm2.generate([GenerateRequest(messages=chat("What is 2+3?"), params=SamplingParams(max_new_tokens=8))])
    assert c.n_tokens > 0 and c.text.strip()
    (lp,) = smollm2.score([ScoreRequest(continuation=" 5", messages=chat("What is 2+3?"), prefill="The answer is")])
    assert lp.available and len(lp.logprobs) >= 1 and all(v <= 0 for v in lp.logprobs)
    assert converted_dir().joinpath("model.safetensors").exists()


def _zcp(*args: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-m", "zcp_core.cli.main", *args, "--json", "--no-cache"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_cli_generate_and_score() -> None:
    g = _zcp("generate", "What is 2+3?", "Name a colour.", "--max-new-tokens", "6")
    assert len(g["completions"]) == 2 and all(c["n_tokens"] > 0 for c in g["completions"])
    s = _zcp("score", "What is 2+3?", " 5", "--prefill", "The answer is")
    assert 0 < s["p_all"] <= 1 and math.isclose(s["p_all"], math.exp(sum(s["logprobs"]) / len(s["logprobs"])))
