"""Make the example runs bundled in ``data/examples/``: a known-contaminated model and the clean one.

A fresh ``make demo`` cannot train a lab model within its 3-minute budget, so
the demo ships these runs, each labelled as an example in its manifest
(``example``: the script and command that reproduce it). This script makes
them from scratch on a CPU (about 10 minutes on 2 cores, most of it the lab
build, which is cached in ``$ZCP_CACHE/lab``):

1. ``zcp lab build --mode direct`` (the default profile: 40 contaminated C
   items, 40 clean U items of GSM8K test);
2. the C and U items and their numeric twins, written to ``items.jsonl`` and
   ``twins.jsonl`` of the example probe runs;
3. ``zcp probe`` of ``lab:direct`` and of the untouched ``smollm2`` on those
   same 80 items against the same twins (``probe-lab-direct``,
   ``probe-smollm2-lab-items``): flagged items exist and C differs;
4. ``zcp lab evaluate`` of both models (``lab-eval-direct``,
   ``lab-eval-direct-smollm2``);
5. ``zcp guided`` (Time-Travel) of the embedded model on the first 12 GSM8K
   test items (``guided-smollm2-gsm8k12``: several minutes of generation on
   a CPU, too slow for the demo's first minutes).

6. ``zcp lab matrix --replicates 3`` over every kind (direct, evasive,
   verbatim, solution, paper and the untouched model) against every detector
   (the probe's metrics, Time-Travel with the rule judge, Min-K%/zlib and
   ``cot_acc``), each build with its manipulation check (``took``); evasive
   and paper are built once. The pooled run is ``lab-matrix-replicates``
   (median AUROC, range, replicates caught, pooled exact p); its replicate 0,
   the single-build matrix, is ``lab-matrix``. Each missing build takes about
   5-20 minutes on 2 cores (``--build-missing``), the whole run about 4 hours
   cold, a few minutes from the cache.

7. ``zcp lab dose --kinds solution --doses 2,6,12 --build-missing``
   (``lab-dose``) and the same for ``--kinds paper`` (``lab-dose-paper``),
   only on request (``--only lab-dose``, ``--only lab-dose-paper``): two
   builds each beyond the matrix's, about 40 minutes a kind on 2 cores when
   the cache is cold; a few minutes from the cache.

``--only NAME`` (repeatable) remakes just those runs.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/make_examples.py            # writes data/examples/
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The split items and twins are bundled beside the runs under these names (same bytes, same sha256).
BUNDLED = {"items.jsonl": "data/examples/lab-direct-items.jsonl", "twins.jsonl": "data/examples/lab-direct-twins.jsonl"}
NOTE = "Example run bundled with zcp, made by `scripts/make_examples.py` (see `data/examples/README.md`)."


def zcp(*args: str) -> str:
    """Run one ``zcp`` command from the checkout, failing loudly; a run it writes replaces the work folder's old
    one (``--overwrite``: the work folder is this script's own)."""
    writes = "--out" in args
    cmd = [sys.executable, "-m", "zcp_core.cli.main", *args, *(["--overwrite"] if writes else [])]
    print("+ zcp " + " ".join(args), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout


def write_split_items(work: Path, seed: int = 0) -> tuple[Path, Path]:
    """The lab build's C and U originals and their numeric twins, as items files."""
    from zcp_core.lab.evaluate import eval_items

    ev = eval_items("direct", seed=seed)
    items, twins = work / "items.jsonl", work / "twins.jsonl"
    with items.open("w", encoding="utf-8") as f:
        for it in ev.originals:
            # solution and source travel with each item, so a release of the run carries them
            f.write(json.dumps({"id": it.id, "question": it.question, "answer": it.answer,
                                "solution": it.solution, "source": it.source, "split": ev.split_of[it.id]}) + "\n")
    from zcp_core.lab.config import LAB_AMBIGUITY
    from zcp_core.probe.ktwins import DEFAULT_TWINS
    from zcp_core.reference import perturb_gsm8k

    # K twins per item and the spare, as `zcp probe --twins K` draws them (twin k with seed k - 1); twin 1 is the
    # lab's own
    extra = [t for k in range(2, DEFAULT_TWINS + 2)
             for t in perturb_gsm8k(list(ev.originals), seed=seed + k - 1, twin=k, ambiguity=LAB_AMBIGUITY).items]
    with twins.open("w", encoding="utf-8") as f:
        for it in [*ev.twins, *extra]:
            # method and the re-execution record travel with each twin, so `zcp release` can verify it
            f.write(json.dumps({"id": it.id, "original_id": it.original_id, "question": it.question,
                                "answer": it.answer, "solution": it.solution, "source": it.source,
                                "method": it.metadata.get("method"), "twin": int(it.metadata.get("twin") or 1),
                                "verification": it.metadata.get("verification")}) + "\n")
    return items, twins


def portable(command: str, name: str) -> str:
    """The maker's command with its work-folder paths replaced by the bundled copies (and ``--out runs/NAME``)."""
    words = [w for w in shlex.split(command) if w != "--overwrite"]  # the maker's own flag, no user's
    for i, w in enumerate(words):
        if w.startswith("/"):
            words[i] = BUNDLED.get(Path(w).name, f"runs/{name}" if Path(w).name == name else Path(w).name)
    return shlex.join(words)


def label(run: Path, command: str) -> None:
    """Mark a run folder as a bundled example (the app shows the label and the command)."""
    m = run / "manifest.json"
    manifest = json.loads(m.read_text(encoding="utf-8"))
    manifest["example"] = {"note": NOTE, "script": "scripts/make_examples.py", "command": command}
    for d in manifest.get("datasets", []):  # point at the bundled copies, never at the maker's work folder
        d["path"] = BUNDLED.get(Path(d["path"]).name, d["path"])
    manifest["command"] = portable(manifest.get("command", ""), run.name)
    m.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Build, probe and evaluate; copy the runs to ``--out`` labelled as examples."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "examples")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "make-examples")
    ap.add_argument("--only", action="append", default=None, help="remake only this run (repeatable)")
    ap.add_argument("--relabel", action="store_true",
                    help="remake nothing: relabel the runs already in --out (their example entry and portable paths)")
    args = ap.parse_args(argv)
    if args.relabel:
        for m in sorted(args.out.glob("*/manifest.json")):
            label(m.parent, json.loads(m.read_text(encoding="utf-8"))["example"]["command"])
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ZCP_CACHE", str(ROOT / ".zcp_cache"))
    args.work.mkdir(parents=True, exist_ok=True)
    want = (lambda name: args.only is None or name in args.only)  # noqa: E731
    made: dict[str, str] = {}
    items = twins = None
    if any(want(n) for n in ("probe-lab-direct", "probe-smollm2-lab-items", "lab-eval-direct",
                             "lab-eval-direct-smollm2")):
        zcp("lab", "build", "--mode", "direct")
        items, twins = write_split_items(args.work)
    for name, model in (("probe-lab-direct", "lab:direct"), ("probe-smollm2-lab-items", "smollm2")):
        if want(name):
            zcp("probe", "--model", model, "--dataset", str(items), "--format", "items", "--reference", str(twins),
                "--out", str(args.work / name))
            made[name] = f"zcp probe --model {model} --dataset items.jsonl --format items --reference twins.jsonl"
    for name, extra in (("lab-eval-direct", []), ("lab-eval-direct-smollm2", ["--model", "smollm2"])):
        if want(name):
            zcp("lab", "evaluate", "--name", "direct", *extra, "--out", str(args.work / name))
            made[name] = " ".join(["zcp lab evaluate --name direct", *extra])
    guided = ["guided", "--model", "smollm2", "--dataset", "data/gsm8k/test.jsonl", "--dataset-name", "GSM8K",
              "--split-name", "test", "--limit", "12"]
    matrix = ["lab", "matrix", "--kinds", "direct,evasive,verbatim,solution,paper,none", "--replicates", "3",
              "--single-build", "evasive,paper", "--build-missing"]
    if want("lab-matrix") or want("lab-matrix-replicates"):
        pooled = args.work / "lab-matrix-replicates"
        zcp(*matrix, "--out", str(pooled))
        # The pooled run reads its replicates from its own tables; replicate 0 (seed 0) is the single-build
        # matrix and is bundled on its own, so the other replicate folders are not copied twice.
        shutil.rmtree(args.work / "lab-matrix", ignore_errors=True)
        shutil.copytree(pooled / "replicate-0", args.work / "lab-matrix")
        made["lab-matrix"] = made["lab-matrix-replicates"] = "zcp " + " ".join(matrix)
    for name, kind in (("lab-dose", "solution"), ("lab-dose-paper", "paper")):
        dose = ["lab", "dose", "--kinds", kind, "--doses", "2,6,12", "--build-missing"]
        if args.only is not None and name in args.only:  # only on request: two more builds when the cache is cold
            zcp(*dose, "--out", str(args.work / name))
            made[name] = "zcp " + " ".join(dose)
    if want("guided-smollm2-gsm8k12"):
        zcp(*guided, "--out", str(args.work / "guided-smollm2-gsm8k12"))
        made["guided-smollm2-gsm8k12"] = "zcp " + " ".join(guided)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, command in made.items():
        dest = args.out / name
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(args.work / name, dest, ignore=shutil.ignore_patterns("replicate-*"))
        label(dest, command)
        for p in dest.rglob("*"):
            if p.is_file():
                p.chmod(0o644)
    if items is not None and twins is not None:
        shutil.copy(items, args.out / "lab-direct-items.jsonl")
        shutil.copy(twins, args.out / "lab-direct-twins.jsonl")
    print(f"wrote {', '.join(made)} to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
