"""A cleaned DetectRL release a maintainer publishes as it is: portable card, files by umask, the residual
rate of its library on the card, and no-derivatives sources refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from zcp_core.artifacts.patterns import load_library
from zcp_core.artifacts.residual import ResidualRate, load_residual, measure, residual_lines

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
LOCAL = re.compile(r"(^|[\s`('\"])/(work|tmp|home|root|usr|var|Users)/")


def test_residual_rate_is_clopper_pearson() -> None:
    lib = load_library()
    rate = measure(lib, "x", [True, True] + [False] * 318, "a reviewer")
    assert (rate.with_artifact, rate.reviewed, rate.library_sha256) == (2, 320, lib.sha256)
    # golden: the exact binomial interval of 2 in 320
    assert rate.ci_low == pytest.approx(0.0007578, abs=1e-7) and rate.ci_high == pytest.approx(0.0223936, abs=1e-7)
    zero = measure(lib, "x", [False] * 300, "a reviewer")
    assert zero.ci_low == 0.0 and zero.ci_high == pytest.approx(1 - 0.025 ** (1 / 300), rel=1e-6)


def test_residual_is_quoted_only_for_the_library_it_was_measured_on(tmp_path: Path) -> None:
    lib = load_library()
    stored = load_residual(lib)
    lines = "\n".join(residual_lines(lib, stored.edges if stored else "none"))
    if stored is None:
        assert "Not measured for pattern library" in lines
    else:
        assert isinstance(stored, ResidualRate) and f"{stored.with_artifact} of {stored.reviewed}" in lines
        assert "Clopper–Pearson 95% interval" in lines
        # the same library cleaned with another edge detector (or none) is never credited with it
        other_edges = "\n".join(residual_lines(lib, "none" if stored.edges != "none" else "some-model"))
        assert "Not measured for this cleaning" in other_edges
    # another library (one pattern more) is never credited with that measurement
    other = tmp_path / "lib.yaml"
    text = Path(lib.path).read_text(encoding="utf-8")
    other.write_text(text + "\n", encoding="utf-8")
    if stored is not None:
        shutil.copy(Path(lib.path).with_name(Path(lib.path).stem + ".residual.yaml"), tmp_path / "lib.residual.yaml")
    assert "Not measured" in "\n".join(residual_lines(load_library(other)))


def test_clean_release_card_is_portable_and_files_follow_the_umask(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    old = os.umask(0o022)
    try:
        assert main(["clean", *map(str, SAMPLE), "--out", str(tmp_path / "runs" / "c"), "--allow-unlicensed"]) == 0
    finally:
        os.umask(old)
    out = capsys.readouterr().out
    assert "{'" not in out and "flags:" not in out  # sentences, never a dict
    run = tmp_path / "runs" / "c"
    for f in [*run.iterdir(), *(run / "cleaned").iterdir()]:
        if f.is_file():
            assert stat.S_IMODE(f.stat().st_mode) == 0o644, f
    card = (run / "cleaned" / "README.md").read_text()
    assert "## What cleaning leaves behind" in card
    for text in (card, (run / "cleaned" / "README.md").read_text()):
        assert str(tmp_path) not in text and not LOCAL.search(text) and "runs/" not in text
    assert "DetectRL" in card and "https://github.com/NLP2CT/DetectRL" in card


def test_clean_of_a_no_derivatives_source_is_refused(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    src = tmp_path / "data" / "thing"
    src.mkdir(parents=True)
    shutil.copy(SAMPLE[0], src / "texts.json")
    (src.parent / "SOURCES.md").write_text("| folder | licence |\n|---|---|\n| `thing/` | CC-BY-NC-ND-4.0 |\n")
    assert main(["clean", str(src / "texts.json"), "--out", str(tmp_path / "c")]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1 and "forbids derivatives" in err[0] and "texts edited or dropped" in err[0]
    assert not (tmp_path / "c" / "cleaned").exists()


def test_clean_summary_json_names_no_local_path(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    assert main(["clean", str(SAMPLE[0]), "--out", str(tmp_path / "c"), "--allow-unlicensed", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["license"] == "unknown"
