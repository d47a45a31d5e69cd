"""Write the residual review's criteria (benchmarks/results/clean_residual_criteria.md), the same for every round.

The criteria are the text below, given as they are to every reviewer of `benchmarks/clean_residual.py`'s
rounds; the file is written from here so that it carries the commit it was written at.

    .venv/bin/python benchmarks/clean_residual_criteria.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "clean_residual_criteria.md"
CRITERIA = """Every round of the residual review (`benchmarks/clean_residual.py`) is marked under these criteria, by a
reviewer who did not write the patterns or build the edge detector. The reviewer sees each sampled text as the
cleaner left it, with the edits that were applied (what was removed, and by which pattern or model), and nothing
else: not the pattern library, not the detector, not earlier reviews.

## The question

Does the cleaned text still hold an **artifact**: something left by the generation process that a person writing
this kind of text (a news document, a paper abstract, a story, a review) would not have written into it?

Mark `artifact: true` when any of these is still in the text:

| kind | what it is | examples |
|---|---|---|
| `opener` | an assistant's lead-in to its answer | "Here is a possible abstract for the article …", "I wrote the rest of the comments:" |
| `closer` | an assistant's sign-off or offer | "Do you want me to make any changes to this draft?", "I hope this helps" |
| `task_echo` | the request restated: its instructions, its prompt, its title given as a task | "[STORY] will be written according to the [WRITING PROMPT] below", a first sentence repeated twice in a row |
| `label` | a format label left in the text | "Title:", "Heading:", "Abstract:", "Key Highlights:**" |
| `format` | a headline or paper title standing above or glued to the body, or markdown residue | "A New Spinfoam Vertex for Quantum Gravity We propose …", "…Rogue BroadcastsMIn a shocking …" |
| `meta` | a note about the text itself | "(7 sentences)", "Word count: 250" |
| `placeholder` | a template slot never filled | "[Company Name]", "[Your Name]", "XYZ Hotel" |
| `refusal` | a refusal or policy note, whole or in part | "I cannot fulfill your request", "as it goes against ethical standards" |
| `other` | anything else the process left: a self-description, a role tag, a tips list that answers the user | "I am Claude, an AI assistant created by Anthropic" |

Not artifacts: the text's own content, however poor (typos, repetition inside the story, odd facts, a weak
ending); a dateline or location that opens a news document ("BIRMINGHAM, England (AP) —"); a first sentence that
summarises the story as a full sentence; markup a human text of the same domain also uses.

## How to mark

One JSON row per sampled text:

- `sample_id`, `id`: copied from the sample;
- `artifact`: true or false;
- `borderline`: true when the decision is a judgement call (say why in `note`); a borderline text marked
  `artifact: true` still counts as a residual;
- `span`: the exact text of what is left (empty when none);
- `kind`: one of the kinds above (empty when none);
- `over_cut`: true when an applied edit removed the text's own content (a real first sentence, part of the
  story), with the removed words in `note`; this is not a residual, it is reported apart;
- `note`: one sentence on the decision;
- `reviewer`: who reviewed, in words.

A text whose status says it is *in review* (the edge detector was unsure) is marked like any other: it is in
the release until a maintainer acts, so what it still holds counts.
"""


def main() -> int:
    """Write the criteria file."""
    OUT.write_text(header("Residual-artifact review: the written criteria",
                          "criteria unchanged since first written; used by rounds 6 and 7") + "\n" + CRITERIA,
                   encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
