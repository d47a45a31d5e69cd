"""Independent judges for LLM twins, and which twins `zcp release` may publish (reference.llm, probe.release)."""

from __future__ import annotations

import pytest

from zcp_core.backends import Completion
from zcp_core.probe.release import twin_verification
from zcp_core.reference import build_reference_llm, judge_conflicts
from zcp_core.schema import Item

GOOD = "New Problem: Ann has 4 pens and buys 5.\nNew Solution: 4+5=9\nNew Answer: 9"


class Scripted:
    """A stand-in backend that answers from a function (the pipeline and the release rule are under test)."""

    name = "scripted"
    supports_logprobs = False

    def __init__(self, model_id: str, reply: str, revision: str = "r1") -> None:
        self.model_id, self.reply, self.revision = model_id, reply, revision

    def generate(self, requests, progress=False):  # type: ignore[no-untyped-def]
        return [Completion(text=self.reply, n_tokens=5, finish_reason="stop") for _ in requests]


YES = "Fine.\nResult: CORRECT"


class Both(Scripted):
    """One model that writes twins and, asked to review, approves them (a self-judging generator)."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id, GOOD)

    def generate(self, requests, progress=False):  # type: ignore[no-untyped-def]
        return [Completion(text=YES if "reviewing" in r.messages[-1].content else GOOD, n_tokens=5,
                           finish_reason="stop") for r in requests]


@pytest.mark.parametrize(("generator", "judges", "problems"), [
    ("gen", ["a", "b"], []),
    ("gen", ["gen", "b"], ["judge 1 is the generator (gen)"]),
    ("gen", ["a", "a"], ["judges 1 and 2 are the same model (a)"]),
    ("gen", ["gen", "gen"], ["judge 1 is the generator (gen)", "judge 2 is the generator (gen)",
                             "judges 1 and 2 are the same model (gen)"]),
])
def test_judge_conflicts_golden(generator: str, judges: list[str], problems: list[str]) -> None:
    assert judge_conflicts(generator, judges) == problems


def _items(n: int = 2) -> list[Item]:
    return [Item(id=f"q{i}", question=f"Ann has {i + 2} pens and buys 3. How many?", answer=str(i + 5),
                 source="toy") for i in range(n)]


def test_distinct_judges_are_required_by_default() -> None:
    gen = Scripted("gen", GOOD)
    with pytest.raises(ValueError, match="judge 1 is the generator"):
        build_reference_llm(gen, [gen, Scripted("b", YES)], _items())
    a = Scripted("a", YES)
    with pytest.raises(ValueError, match="judges 1 and 2 are the same model"):
        build_reference_llm(gen, [a, a], _items())


def test_twins_record_generator_and_judges_and_release_only_two_distinct_judges() -> None:
    gen = Scripted("gen", GOOD, revision="g7")
    rs = build_reference_llm(gen, [Scripted("a", YES), Scripted("b", YES, revision="b2")], _items())
    twin = rs.items[0]
    assert twin.metadata["generator"] == "gen" and twin.metadata["judges"] == ["a", "b"]
    assert twin.metadata["models"] == {"generator": {"model": "gen", "revision": "g7"},
                                       "judges": [{"model": "a", "revision": "r1"}, {"model": "b", "revision": "b2"}],
                                       "independent_judges": True}
    assert twin.metadata["judge_policy"] == "distinct"
    check = twin_verification(twin)
    assert check.verification == "two_distinct_judges" and "a, b" in check.detail and "generator gen" in check.detail

    # One model voting for itself, allowed on request, is recorded as such and never released.
    me = Both("me")
    self_judged = build_reference_llm(me, [me, me], _items(1), judge_policy="allow_self").items[0]
    assert self_judged.metadata["models"]["independent_judges"] is False
    assert self_judged.metadata["judge_policy"] == "allow_self"
    assert twin_verification(self_judged).verification is None
    one_judge = build_reference_llm(gen, [Scripted("a", YES)], _items(1)).items[0]
    assert twin_verification(one_judge).verification is None  # one vote is not two


@pytest.mark.parametrize(("meta", "verification", "detail"), [
    ({"method": "numeric-perturbation-v1",
      "verification": {"method": "numeric-perturbation-v1", "reexecuted": True, "check": "reexecute-v1"}},
     "reexecuted", "re-executed"),
    ({"method": "numeric-perturbation-v2", "verification": {"reexecuted": True}}, "reexecuted", "v2"),
    ({"method": "numeric-perturbation-v1"}, None, "without a passed re-execution"),
    ({"method": "numeric-perturbation-v1", "verification": {"reexecuted": False}}, None, "re-execution"),
    ({"method": "numeric-perturbation-v1", "verification": {"reexecuted": "yes"}}, None, "re-execution"),
    # hand-written LLM metadata: judges must be distinct, not the generator, and CORRECT on the kept attempt
    ({"method": "llm-isomorphic-v1", "generator": "g", "judges": ["a", "b"],
      "attempts": [{"verdicts": [{"judge": "judge1:a", "verdict": "CORRECT"},
                                 {"judge": "judge2:b", "verdict": "CORRECT"}]}]}, "two_distinct_judges", "a, b"),
    ({"method": "llm-isomorphic-v1", "generator": "g", "judges": ["a", "b"],
      "attempts": [{"verdicts": [{"judge": "judge1:a", "verdict": "CORRECT"},
                                 {"judge": "judge2:b", "verdict": "UNPARSED"}]}]}, None, "two distinct judges"),
    ({"method": "llm-isomorphic-v1", "generator": "g", "judges": ["g", "b"]}, None, "two distinct judges"),
    ({"method": "llm-isomorphic-v1", "generator": "g", "judges": ["a", "a"]}, None, "two distinct judges"),
    ({}, None, "cannot verify"),
])
def test_twin_verification_golden(meta: dict, verification: str | None, detail: str) -> None:
    check = twin_verification(Item(id="x-ref", question="q", answer="1", original_id="x", metadata=meta))
    assert check.verification == verification and detail in check.detail
