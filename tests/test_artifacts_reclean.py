"""Optional LLM re-cleaning with the real embedded model: only flagged texts, recorded, undoable, re-scanned."""

from __future__ import annotations

import pytest

from zcp_core.artifacts import clean, load_library, reclean, reclean_requests, undo
from zcp_core.schema import TextRecord


def test_reclean_requests_are_few_shot():
    (req,) = reclean_requests(["Here is a story:Once."], max_new_tokens=8)
    roles = [m.role for m in req.messages]
    assert roles[0] == "system" and roles[-1] == "user" and roles.count("assistant") == 2
    assert req.messages[-1].content == "Here is a story:Once." and req.params.greedy


@pytest.mark.slow  # ~80 s of CPU generation on this box; run with -m slow
@pytest.mark.model
def test_reclean_with_smollm2(smollm2):
    lib = load_library()
    texts = [TextRecord("a", "Here is a 3 sentence story:The cat sat. It slept. It woke up. I hope you like it.", "llm"),
             TextRecord("b", "The dog ran home. It was late.", "llm")]
    base = clean(texts, lib, scorer=lambda xs: [0.9 if "cat" in x else 0.1 for x in xs])
    assert set(base.flags.loc[base.flags["kind"] == "residual_score", "id"]) == {"a"}
    out = reclean(base, lib, smollm2, kinds=("residual_score",), max_new_tokens=24)
    by_id = {t.id: t.text for t in out.texts}
    assert by_id["b"] == "The dog ran home. It was late."  # unflagged texts are never sent to the model
    llm_edits = out.edits[out.edits["stage"] == 1]
    assert set(llm_edits["id"]) <= {"a"}
    if len(llm_edits):  # the rewrite is recorded and undoable back to the original
        assert by_id["a"] == llm_edits["replacement"].iloc[0]
    assert undo(by_id["a"], out.edits[out.edits["id"] == "a"]) == texts[0].text
