"""Releases a maintainer can publish as they are: dataset card, licence, counts, canary, 0644 files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from zcp_core.publish import (
    ALL_RIGHTS_RESERVED,
    Card,
    DerivativesForbidden,
    LicenseAmbiguous,
    LicenseInfo,
    LicenseNotRecognised,
    RedistributionForbidden,
    UnlicensedSource,
    find_license,
    render_card,
    require_license,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


MIT_TEXT = (DATA / "gsm8k" / "LICENSE").read_text()
APACHE_TEXT = ("\n                                 Apache License\n                           Version 2.0, January 2004\n"
               "                        http://www.apache.org/licenses/\n\n   TERMS AND CONDITIONS FOR USE...")
GPL3_TEXT = ("                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n\n"
             " Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>")
CC_NC_TEXT = "Attribution-NonCommercial 4.0 International\n\n=======================================\n"


# The golden table: what a licence file or a SOURCES.md entry says -> (status, SPDX, hub id, restrictions).
@pytest.mark.parametrize("where, text, status, spdx, hub, restrictions", [
    ("file", MIT_TEXT, "identified", "MIT", "mit", ()),
    ("file", APACHE_TEXT, "identified", "Apache-2.0", "apache-2.0", ()),
    ("file", GPL3_TEXT, "identified", "GPL-3.0-only", "gpl-3.0", ()),
    ("file", CC_NC_TEXT, "identified", "CC-BY-NC-4.0", "cc-by-nc-4.0", ("non-commercial",)),
    ("file", "SPDX-License-Identifier: CC-BY-NC-ND-4.0\n...", "identified", "CC-BY-NC-ND-4.0", "cc-by-nc-nd-4.0",
     ("non-commercial", "no-derivatives")),
    ("file", "CC BY 4.0\n", "identified", "CC-BY-4.0", "cc-by-4.0", ()),
    ("file", "Copyright (c) 2024 Smith. All rights reserved.\n", "all_rights_reserved", ALL_RIGHTS_RESERVED,
     "other", ("all rights reserved",)),
    ("file", "Copyright (c) 2024 X. All rights reserved.\n\nRedistribution and use in source and binary forms...",
     "none", "", "unknown", ()),  # a BSD-style text we cannot name is unknown, not "all rights reserved"
    ("file", "", "none", "", "unknown", ()),  # an empty LICENSE file
    ("file", "Use it as you like, mostly.", "none", "", "unknown", ()),
    ("entry", "MIT (OpenAI), `gsm8k/LICENSE`", "identified", "MIT", "mit", ()),
    ("entry", "Apache-2.0", "identified", "Apache-2.0", "apache-2.0", ()),
    ("entry", "Apache License, Version 2.0", "identified", "Apache-2.0", "apache-2.0", ()),
    ("entry", "CC BY 4.0", "identified", "CC-BY-4.0", "cc-by-4.0", ()),
    ("entry", "CC BY-NC 4.0", "identified", "CC-BY-NC-4.0", "cc-by-nc-4.0", ("non-commercial",)),
    ("entry", "CC BY-NC 4.0, commercial use not permitted", "identified", "CC-BY-NC-4.0", "cc-by-nc-4.0",
     ("non-commercial",)),  # contains "mit" in "permitted": never MIT
    ("entry", "GPL-3.0", "identified", "GPL-3.0-only", "gpl-3.0", ()),
    ("entry", "All rights reserved", "all_rights_reserved", ALL_RIGHTS_RESERVED, "other", ("all rights reserved",)),
    ("entry", "all rights reserved by Smith", "all_rights_reserved", ALL_RIGHTS_RESERVED, "other",
     ("all rights reserved",)),
    ("entry", "none", "none", "", "unknown", ()),
    ("entry", "**none**: DetectRL ships no licence", "none", "", "unknown", ()),
    ("entry", "permissive, ask the authors", "none", "", "unknown", ()),
    # no-derivatives: identified, and the restriction is what refuses a replacing release
    ("entry", "CC-BY-ND-4.0", "identified", "CC-BY-ND-4.0", "cc-by-nd-4.0", ("no-derivatives",)),
    ("file", "Attribution-NonCommercial-NoDerivatives 4.0 International\n", "identified", "CC-BY-NC-ND-4.0",
     "cc-by-nc-nd-4.0", ("non-commercial", "no-derivatives")),
    # a family with no version is ambiguous, never a guessed version (license-expression reads "GPL" as 1.0+)
    ("file", "GPL\n", "ambiguous", "", "unknown", ()),
    ("entry", "GPL", "ambiguous", "", "unknown", ()),
    ("entry", "BSD", "ambiguous", "", "unknown", ()),
    ("entry", "CC", "ambiguous", "", "unknown", ()),
    ("entry", "CC BY-SA (see the website)", "ambiguous", "", "unknown", ()),
    ("file", "GPLv3\n", "ambiguous", "", "unknown", ()),
    ("entry", "GPL-2.0-or-later", "identified", "GPL-2.0-or-later", "gpl-2.0", ()),
])
def test_license_golden_table(tmp_path: Path, where, text, status, spdx, hub, restrictions) -> None:
    src = tmp_path / "src" / "thing"
    src.mkdir(parents=True)
    if where == "file":
        (src / "LICENSE").write_text(text)
    else:
        (src.parent / "SOURCES.md").write_text(f"| folder | what | licence |\n|---|---|---|\n| `thing/` | x | {text} |\n")
    info = find_license([src / "data.jsonl"])
    assert (info.status, info.spdx, info.hub_id, info.restrictions) == (status, spdx, hub, restrictions)
    assert str(tmp_path) not in info.found_in  # never an absolute local path
    if status == "identified":
        assert info.found_in.startswith("found in ")
        require_license(info, allow_unlicensed=False)
    elif status == "all_rights_reserved":
        for allow in (False, True):
            with pytest.raises(RedistributionForbidden, match="forbids redistribution"):
                require_license(info, allow_unlicensed=allow)
    elif status == "ambiguous":
        assert "it could be " in info.found_in  # the candidates are listed
        for allow in (False, True):
            with pytest.raises(LicenseAmbiguous, match="never guessed"):
                require_license(info, allow_unlicensed=allow)
    else:
        with pytest.raises(UnlicensedSource, match="--allow-unlicensed"):
            require_license(info, allow_unlicensed=False)
        require_license(info, allow_unlicensed=True)


@pytest.mark.parametrize("dataset, spdx, file, found", [
    (DATA / "gsm8k" / "test.jsonl", "mit", "LICENSE", "found in data/gsm8k/LICENSE"),
    (DATA / "math500" / "test.jsonl", "mit", "LICENSE", "found in data/math500/LICENSE"),
    (DATA / "gsm1k" / "gsm1k_public_50.csv", "mit", "LICENSE.md", "found in data/gsm1k/LICENSE.md"),
    ("data/examples/lab-direct-items.jsonl", "mit", "LICENSE", "found in data/examples/LICENSE"),
    (DATA / "detectrl_sample" / "placeholder.json", "unknown", None, "data/SOURCES.md entry for detectrl_sample/"),
])
def test_find_license_beside_the_data(dataset, spdx: str, file: str | None, found: str) -> None:
    info = find_license([dataset])
    assert info.hub_id == spdx and found in info.found_in
    assert (info.file.name if info.file else None) == file


def test_license_given_by_hand_says_so(tmp_path: Path) -> None:
    given = find_license([DATA / "detectrl_sample" / "placeholder.json"], "cc-by-4.0")
    assert (given.status, given.spdx, given.hub_id, given.given) == ("identified", "CC-BY-4.0", "cc-by-4.0", True)
    assert given.found_in.startswith("given with --license cc-by-4.0 by the person who ran the release; "
                                     "the source itself has no licence")
    assert find_license([], "Apache-2.0").hub_id == "apache-2.0"
    with pytest.raises(LicenseNotRecognised, match="not an SPDX"):
        find_license([], "whatever-i-like")
    for vague in ("GPL", "bsd", "CC BY"):
        with pytest.raises(LicenseNotRecognised, match="names no single licence: it could be "):
            find_license([], vague)
    lic = tmp_path / "MY_LICENSE"
    lic.write_text(MIT_TEXT)
    by_file = find_license([], str(lic))
    assert by_file.hub_id == "mit" and by_file.file == lic and "given with --license MY_LICENSE" in by_file.found_in


def _card(lic: LicenseInfo, title: str = "Audited benchmark: nothing replaced") -> str:
    return render_card(Card(title=title, data_file="benchmark.jsonl", split="test", license=lic,
                            source=("`a.jsonl`",), citation="Someone 2024", canary="ZCP-CANARY x",
                            counts={"replaced": "0"}, body="## Replaced\n\n(none)"))


def test_card_front_matter_and_unlicensed_notice() -> None:
    text = _card(LicenseInfo("none", "", None, "no LICENSE"))
    head, _, rest = text.partition("\n---\n")
    assert head.startswith("---\nlicense: unknown") and "path: benchmark.jsonl" in head and "split: test" in head
    assert "# Audited benchmark: nothing replaced" in rest and "no licence" in rest and "ZCP-CANARY x" in rest


def test_card_yaml_round_trips_a_title_with_both_quotes() -> None:
    import yaml

    title = """The "refreshed" benchmark's items: it's a 'test' \\ with: colons # and hashes"""
    text = _card(LicenseInfo("identified", "MIT", None, "found in data/gsm8k/LICENSE"), title=title)
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["pretty_name"] == title and meta["license"] == "mit"
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "benchmark.jsonl"}]}]


def test_card_puts_a_non_commercial_notice_first() -> None:
    text = _card(LicenseInfo("identified", "CC-BY-NC-4.0", None, "found in data/x/LICENSE"))
    assert "license: cc-by-nc-4.0\n" in text and "license: mit" not in text
    notice, licence = text.index("non-commercial"), text.index("## Licence")
    assert notice < licence


def _probe_run_with_source(tmp_path: Path, entry: str) -> Path:
    """A copy of a bundled example probe run whose source dataset sits beside a SOURCES.md saying ``entry``."""
    import json
    import shutil

    src = tmp_path / "data" / "thing"
    src.mkdir(parents=True)
    (src.parent / "SOURCES.md").write_text(f"| folder | what | licence |\n|---|---|---|\n| `thing/` | items | {entry} |\n")
    run = tmp_path / "run"
    shutil.copytree(DATA / "examples" / "probe-lab-direct", run)
    m = json.loads((run / "manifest.json").read_text())
    for d in m["datasets"]:
        name = Path(d["path"]).name
        shutil.copy(ROOT / d["path"], src / name)
        d["path"] = str(src / name)
    (run / "manifest.json").write_text(json.dumps(m))
    return run


def test_zcp_release_of_a_non_commercial_source(tmp_path: Path) -> None:
    from zcp_core.cli.main import main

    run = _probe_run_with_source(tmp_path, "CC BY-NC 4.0")
    assert main(["release", str(run), "--out", str(tmp_path / "rel")]) == 0
    card = (tmp_path / "rel" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-nc-4.0\n") and "license: mit" not in card
    assert -1 < card.index("non-commercial") < card.index("## Licence")
    assert "found in data/SOURCES.md entry" not in card  # the tmp data root is not a data root: file names only
    assert str(tmp_path) not in card  # no absolute local path anywhere in the card
    assert "`lab-direct-items.jsonl` (sha256 `" in card


def test_zcp_release_refuses_all_rights_reserved(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    run = _probe_run_with_source(tmp_path, "All rights reserved by the authors")
    assert main(["release", str(run), "--out", str(tmp_path / "a")]) == 1
    assert "forbids redistribution" in capsys.readouterr().err
    assert main(["release", str(run), "--out", str(tmp_path / "b"), "--allow-unlicensed"]) == 1
    assert "--allow-unlicensed does not override it" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert main(["release", str(run), "--out", str(tmp_path / "c"), "--license", "cc-by-4.0"]) == 0
    card = (tmp_path / "c" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0\n")
    assert "given with --license cc-by-4.0 by the person who ran the release; the source itself reserves all rights" \
        in card


def test_zcp_clean_uses_the_same_licence_logic(tmp_path: Path, capsys) -> None:
    import shutil

    from zcp_core.cli.main import main

    src = tmp_path / "data" / "thing"
    src.mkdir(parents=True)
    shutil.copy(DATA / "detectrl_sample" / sorted(p.name for p in (DATA / "detectrl_sample").glob("*.json"))[0],
                src / "texts.json")
    (src.parent / "SOURCES.md").write_text("| folder | licence |\n|---|---|\n| `thing/` | CC BY-NC 4.0 |\n")
    assert main(["clean", str(src / "texts.json"), "--out", str(tmp_path / "c")]) == 0
    card = (tmp_path / "c" / "cleaned" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-nc-4.0\n") and card.index("non-commercial") < card.index("## Licence")
    assert str(tmp_path) not in card.split("## Source")[1].split("## Counts")[0]
    (src.parent / "SOURCES.md").write_text("| folder | licence |\n|---|---|\n| `thing/` | All rights reserved |\n")
    assert main(["clean", str(src / "texts.json"), "--out", str(tmp_path / "d"), "--allow-unlicensed"]) == 1
    assert "forbids redistribution" in capsys.readouterr().err


@pytest.mark.model
def test_probe_release_is_publishable(smollm2, gsm8k_items, tmp_path: Path) -> None:
    import datasets

    from zcp_core.data import load_items
    from zcp_core.probe import ProbeConfig, release, run_probe
    from zcp_core.probe.release import RELEASE_COLUMNS
    from zcp_core.reference import perturb_gsm8k

    items = gsm8k_items[:4]
    gsm8k = str(DATA / "gsm8k" / "test.jsonl")
    # the user's story: their own reference run (`zcp reference build`) given to the probe, released with no
    # licence flag because the twins inherit GSM8K's licence
    ref = _reference_run(tmp_path, limit=len(items))
    twins = [t for t in load_items(ref / "reference.jsonl")]
    assert [t.question for t in twins] == [t.question for t in perturb_gsm8k(items).items]
    res = run_probe(smollm2, items, twins, ProbeConfig(metrics=("acc",), max_new_tokens=8, n_resamples=200,
                                                       answer_format="number"),  # closed boxes: graded
                    out=tmp_path / "run", model_spec="smollm2", dataset_paths=(gsm8k, str(ref)))
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
    ds = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))  # its cache key ignores content
    assert list(ds) == ["test"] and ds["test"].num_rows == len(items)
    # one schema for every release (GSM8K here, the lab example in test_release_verdict): all strings
    assert dict(ds["test"].features) == {c: datasets.Value("string") for c in RELEASE_COLUMNS}
    assert set(ds["test"]["id"]) >= {it.id for it in items if it.id not in {r.original_id for r in rel.replaced}}


def test_ambiguous_licence_lists_candidates_in_the_refusal() -> None:
    from zcp_core.publish.ambiguous import ambiguous_candidates

    assert ambiguous_candidates("GPL") == ("GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later")
    assert ambiguous_candidates("BSD License") == ("BSD-2-Clause", "BSD-3-Clause", "BSD-4-Clause")
    assert "CC-BY-4.0" in ambiguous_candidates("CC") and "CC0-1.0" in ambiguous_candidates("Creative Commons")
    assert ambiguous_candidates("GPL v2") == ("GPL-2.0-only", "GPL-2.0-or-later")
    for exact in ("MIT", "GPL-3.0", "GPL-3.0-only", "Apache 2.0", "CC BY 4.0", "none", "permissive, ask the authors"):
        assert ambiguous_candidates(exact) == (), exact


def test_no_derivatives_refuses_a_replacing_release_and_allows_an_unchanged_one(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    run = _probe_run_with_source(tmp_path, "CC-BY-ND-4.0")
    assert main(["release", str(run), "--out", str(tmp_path / "a"), "--min-confidence", "0.5"]) == 1
    err = capsys.readouterr().err.strip()
    flagged = json.loads((run / "manifest.json").read_text())["summary"]["flags"]["flagged"]
    assert f"forbids derivatives and this release would have {flagged} items replaced by twins" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "a").exists()
    # the same source released unchanged (the verdict gate replaces nothing) is allowed, and the card says so
    assert main(["release", str(run), "--out", str(tmp_path / "b"), "--min-confidence", "0.9999"]) == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-nd-4.0\n") and "This release is the source unchanged" in card
    lic = LicenseInfo("identified", "CC-BY-NC-ND-4.0", None, "x")
    with pytest.raises(DerivativesForbidden):
        from zcp_core.publish import require_derivatives_allowed

        require_derivatives_allowed(lic, 1)


def test_ambiguous_source_licence_refuses_a_release_with_candidates(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    run = _probe_run_with_source(tmp_path, "GPL")
    assert main(["release", str(run), "--out", str(tmp_path / "a"), "--allow-unlicensed"]) == 1
    err = capsys.readouterr().err
    assert "GPL-2.0-only, GPL-2.0-or-later, GPL-3.0-only or GPL-3.0-or-later" in err and "never guessed" in err
    assert main(["release", str(run), "--out", str(tmp_path / "b"), "--license", "GPL-3.0-or-later"]) == 0


def _reference_run(tmp_path: Path, limit: int = 3) -> Path:
    """A user's own reference run, built by the real CLI from the bundled GSM8K test set."""
    from zcp_core.cli.main import main

    out = tmp_path / "ref"
    assert main(["reference", "build", "--dataset", str(DATA / "gsm8k" / "test.jsonl"), "--limit", str(limit),
                 "--prior-model", "none", "--out", str(out)]) == 0
    return out


def test_reference_run_inherits_its_source_licence(tmp_path: Path) -> None:
    import json

    ref = _reference_run(tmp_path)
    m = json.loads((ref / "manifest.json").read_text())
    assert m["license"]["status"] == "identified" and m["license"]["spdx"] == "MIT" and m["license"]["file"] == "LICENSE"
    assert (ref / "LICENSE").read_text() == (DATA / "gsm8k" / "LICENSE").read_text()
    assert m["source"]["name"].startswith("GSM8K") and m["source"]["url"] == "https://github.com/openai/grade-school-math"
    assert m["source"]["version"] == "3101c7d50724" and "reference twins made by zcp" in m["source"]["derived"]
    info = find_license([ref])  # a folder given to --reference
    assert info.hub_id == "mit" and "inherited by the run ref/" in info.found_in
    assert find_license([ref / "reference.jsonl"]).hub_id == "mit"


def test_release_replacing_user_built_twins_needs_no_licence_flag(tmp_path: Path) -> None:
    """The user story: originals from GSM8K, twins from the user's own reference run, replaced in a release."""
    import json
    import shutil

    from zcp_core.cli.main import main

    ref = _reference_run(tmp_path)
    run = tmp_path / "p"
    shutil.copytree(DATA / "examples" / "probe-lab-direct", run)
    m = json.loads((run / "manifest.json").read_text())
    m["datasets"] = [{"path": str(DATA / "gsm8k" / "test.jsonl"), "sha256": None}, {"path": str(ref), "sha256": None}]
    m["command"] = f"zcp probe --dataset {DATA / 'gsm8k' / 'test.jsonl'} --reference {ref} --out {run}"
    (run / "manifest.json").write_text(json.dumps(m))
    assert main(["release", str(run), "--out", str(tmp_path / "rel"), "--min-confidence", "0"]) == 0
    card = (tmp_path / "rel" / "README.md").read_text()
    assert card.startswith("---\nlicense: mit\n")
    rows = [json.loads(line) for line in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert sum(r["status"] == "replaced" for r in rows) == m["summary"]["flags"]["flagged"] > 0  # the discoveries
    from zcp_core.reference import METHOD_NUMERIC  # the generator's version names the twins' origin

    assert f"reference twins made by zcp ({METHOD_NUMERIC}): file `reference.jsonl`" in card
    for text in (card, (tmp_path / "rel" / "release.json").read_text()):
        assert str(tmp_path) not in text and "runs/" not in text
    # without the inherited record and file, the same twins are refused: the licence is what they inherited
    (ref / "LICENSE").unlink()
    mm = json.loads((ref / "manifest.json").read_text())
    del mm["license"]
    (ref / "manifest.json").write_text(json.dumps(mm))
    assert main(["release", str(run), "--out", str(tmp_path / "rel2"), "--min-confidence", "0"]) == 1


def test_one_canary_format_and_no_lab_bookkeeping_in_a_release(tmp_path: Path) -> None:
    import re
    import shutil

    from zcp_core.cli.main import main

    run = tmp_path / "run"
    shutil.copytree(ROOT / "data" / "examples" / "probe-lab-direct", run)
    assert main(["release", str(run), "--out", str(tmp_path / "rel")]) == 0
    rows = [json.loads(x) for x in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert all("split" not in json.loads(r["metadata"]) for r in rows)  # the lab's C/U split stays in the lab
    fmt = re.compile(r"ZCP-CANARY [0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")
    assert fmt.fullmatch(rows[0]["canary"])
    src = tmp_path / "texts"
    src.mkdir()
    shutil.copy(sorted((DATA / "detectrl_sample").glob("*.json"))[0], src / "texts.json")
    assert main(["clean", str(src / "texts.json"), "--allow-unlicensed", "--out", str(tmp_path / "c")]) == 0
    assert fmt.fullmatch((tmp_path / "c" / "cleaned" / "CANARY.txt").read_text().strip())
    release = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert "path" not in release and all(v not in (None, "", ".") for v in release.values())
