"""Releases a maintainer can publish as they are: dataset card, licence, counts, canary, 0644 files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from zcp_core.publish import Card, LicenseInfo, UnlicensedSource, find_license, render_card, require_license

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


@pytest.mark.parametrize("dataset, spdx, file", [
    (DATA / "gsm8k" / "test.jsonl", "mit", "LICENSE"),
    (DATA / "math500" / "test.jsonl", "mit", "LICENSE"),
    (DATA / "gsm1k" / "gsm1k_public_50.csv", "mit", "LICENSE.md"),
    (DATA / "detectrl_sample" / "placeholder.json", "unknown", None),  # DetectRL ships no licence
])
def test_find_license_beside_the_data(dataset: Path, spdx: str, file: str | None) -> None:
    info = find_license([dataset])
    assert info.spdx == spdx
    assert (info.file.name if info.file else None) == file


def test_license_override_and_refusal(tmp_path: Path) -> None:
    assert find_license([], "apache-2.0") == LicenseInfo("apache-2.0", None, "--license")
    lic = tmp_path / "LICENSE"
    lic.write_text("MIT License\n\nPermission is hereby granted, free of charge...")
    assert find_license([tmp_path / "x.jsonl"]).spdx == "mit"
    none = find_license([tmp_path / "sub" / "x.jsonl"])
    assert not none.known
    with pytest.raises(UnlicensedSource, match="--allow-unlicensed"):
        require_license(none, allow_unlicensed=False)
    require_license(none, allow_unlicensed=True)


def test_card_front_matter_and_unlicensed_notice() -> None:
    card = Card(title="Audited benchmark: nothing replaced", data_file="benchmark.jsonl", split="test",
                license=LicenseInfo("unknown", None, "no LICENSE"), source=("`a.jsonl`",), citation="Someone 2024",
                canary="ZCP-CANARY x", counts={"replaced": "0"}, body="## Replaced\n\n(none)")
    text = render_card(card)
    head, _, rest = text.partition("\n---\n")
    assert head.startswith("---\nlicense: unknown") and "path: benchmark.jsonl" in head and "split: test" in head
    assert "# Audited benchmark: nothing replaced" in rest and "no licence" in rest and "ZCP-CANARY x" in rest


@pytest.mark.model
def test_probe_release_is_publishable(smollm2, gsm8k_items, tmp_path: Path) -> None:
    import datasets

    from zcp_core.probe import ProbeConfig, release, run_probe
    from zcp_core.reference import perturb_gsm8k

    items = gsm8k_items[:4]
    twins = list(perturb_gsm8k(items).items)
    gsm8k = str(DATA / "gsm8k" / "test.jsonl")
    res = run_probe(smollm2, items, twins, ProbeConfig(metrics=("acc",), max_new_tokens=8, n_resamples=200),
                    out=tmp_path / "run", model_spec="smollm2", dataset_paths=(gsm8k,))
    rel = release(res.run_path, tmp_path / "rel")
    folder = tmp_path / "rel"
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlicense: mit\n")
    assert rel.canary in card and "## Counts" in card and "untested" in card and "## Citation" in card
    assert "Grade School Math" in card  # the citation comes from the source's SOURCE.txt
    assert "no verdict was possible: too few pairs" in card  # 4 items cannot give a verdict, and the card says so
    assert (folder / "LICENSE").read_text() == (DATA / "gsm8k" / "LICENSE").read_text()
    title = next(line for line in card.splitlines() if line.startswith("# "))
    assert ("nothing replaced" in title) == (not rel.replaced)
    for f in folder.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f
    ds = datasets.load_dataset(str(folder))
    assert list(ds) == ["test"] and ds["test"].num_rows == len(items)
    assert set(ds["test"]["id"]) >= {it.id for it in items if it.id not in {r.original_id for r in rel.replaced}}
