"""Generator v7: comparisons the solution makes stay true in the twin, and written numbers equal to an unwritten
constant of the chain are held, never tied or moved. v5 (``ambiguity="hold"``) is unchanged (its pinned hashes:
``tests/test_twins.py``)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from zcp_core.reference import METHOD_NUMERIC, find_numbers, perturb_item, reexecute, trace_item
from zcp_core.reference.compare import comparisons, false_inequalities, flipped
from zcp_core.reference.cues import world_constants
from zcp_core.reference.numeric import METHODS
from zcp_core.reference.trace import CALC, Untraceable
from zcp_core.schema import Item


def _gsm(q: str, sol: str, ans: str, i: str = "t-1") -> Item:
    calcs = [{"expr": a.strip(), "result": b.strip()} for a, b in CALC.findall(sol)]
    return Item(id=i, question=q, answer=ans, solution=sol, source="gsm8k", metadata={"calculations": calcs})


def test_method_strings() -> None:
    # v8 is v7 with the order rule (tests/test_twin_distinct.py); without it (order=None) the method is still v7
    from zcp_core.reference.numeric import method_for

    assert METHOD_NUMERIC == "numeric-perturbation-v8"
    assert METHODS == {"tie": "numeric-perturbation-v8", "hold": "numeric-perturbation-v5"}
    assert method_for(order=None) == "numeric-perturbation-v7"


# ---- comparisons ---------------------------------------------------------------------------------------------

# GSM8K test line 16, with its id (so the seed-0 draws are the ones v6 made): v6's twin read "since $105 > $136"
# and kept the jewelry's 105, while the gadgets' 136 was the larger profit.
_JEWEL_Q = ("A merchant wants to make a choice of purchase between 2 purchase plans: jewelry worth $5,000 or "
            "electronic gadgets worth $8,000. His financial advisor speculates that the jewelry market will go up "
            "2.5% while the electronic gadgets market will rise 1.2% within the same month. If the merchant is "
            "looking to maximize profit at the end of this month by making a choice, how much profit would this "
            "be?")
_JEWEL_SOL = ("If he purchases jewelry, he will make a profit of 2.5% which is $5000*(2.5/100) = "
              "$<<5000*(2.5/100)=125>>125\nIf he purchases electronic gadgets, he will make a profit of 1.2% which "
              "is $8000*(1.2/100) = $<<8000*(1.2/100)=96>>96\nIf he wants to maximize profit, since $125 > $96, he "
              "will choose to purchase jewelry, thereby making a profit of $<<125=125>>125\n#### 125")
_JEWEL = _gsm(_JEWEL_Q, _JEWEL_SOL, "125", "gsm8k-149e6bcf771f")


def test_comparisons_are_found_in_symbols_and_words() -> None:
    text = ("since $125 > $96, he buys. Blake won because 3000 > 2920. 20 - 4 <= 16 and 1,200 \u2265 1,100. "
            "Since 1.76 is less than 2 inches, he keeps it. The jeans at $32 are more expensive than $24. "
            "Tom has 30 points less than Betty. The boots cost $5 more than both heels.")
    got = [(c.left, c.op, c.right, c.holds()) for c in comparisons(text)]
    assert got == [("$125", ">", "$96", True), ("3000", ">", "2920", True), ("20 - 4", "<=", "16", True),
                   ("1,200", ">=", "1,100", True), ("1.76", "<", "2", True), ("$32", ">", "$24", True)]
    # a number between the verb and the comparative is a difference, not a comparison; annotations are skipped
    assert comparisons("She has 5*3 = <<5*3=15>>15 and it is $5 more than the rest.") == []


def test_a_comparison_the_new_values_flip_is_detected() -> None:
    # v6's twin: 125 became 105 and 96 became 136
    checked, flips = flipped(_JEWEL_SOL, {F(125): {F(105)}, F(96): {F(136)}})
    assert checked == 1 and flips == ["$125 > $96"]
    assert flipped(_JEWEL_SOL, {F(125): {F(175)}, F(96): {F(88)}}) == (1, [])
    assert flipped(_JEWEL_SOL, {F(5000): {F(7000)}}) == (0, [])  # neither side moves: nothing to check
    assert flipped(_JEWEL_SOL, {F(125): {F(96)}, F(96): {F(96)}})[1] == ["$125 > $96"]  # a tie is not ">"


def test_v7_keeps_the_solutions_comparison_true() -> None:
    """v6 made "$105 > $136 ... a profit of $105" (gold 105, right 136); v7 refuses every draw that flips the
    comparison, so the twin it makes chooses the larger profit."""
    twin = perturb_item(_JEWEL, seed=0)  # v8 keeps v7's comparison rule: the same twin, the v8 label
    assert twin.metadata["method"] == METHOD_NUMERIC and twin.metadata["comparisons"] == 1
    n = [t.value for t in find_numbers(twin.question)]  # 2 plans, $jewelry, $gadgets, jewelry %, gadgets %
    jewelry, gadgets = n[1] * n[3] / 100, n[2] * n[4] / 100
    assert F(twin.answer) == max(jewelry, gadgets) == jewelry > gadgets
    assert twin.metadata["verification"]["inequalities_checked"] == 1
    assert false_inequalities(twin.solution or "") == (1, [])
    # v5 (pinned by the lab, byte for byte) neither checks nor records comparisons: it keeps v6's wrong twin of
    # this item, the only GSM8K test twin of v5 or v6 whose solution writes a false inequality
    v5 = perturb_item(_JEWEL, seed=0, ambiguity="hold")
    assert "comparisons" not in v5.metadata and "inequalities_checked" not in v5.metadata["verification"]
    assert false_inequalities(v5.solution or "") == (1, ["$105 > $136"]) and v5.answer == "105"


def test_the_verifier_fails_a_false_inequality() -> None:
    twin = perturb_item(_JEWEL, seed=0)
    tr = trace_item(_JEWEL)
    changed = {i: t.value for i, t in enumerate(find_numbers(twin.question))
               if t.value != tr.tokens[i].value}
    assert reexecute(twin, tr, changed).ok
    (c,) = comparisons(twin.solution or "")
    bad = (twin.solution or "").replace(f"since {c.left} > {c.right}", f"since {c.right} > {c.left}")
    assert bad != twin.solution
    forged = Item(id=twin.id, question=twin.question, answer=twin.answer, solution=bad, source=twin.source,
                  original_id=twin.original_id, metadata=twin.metadata)
    verdict = reexecute(forged, tr, changed)
    assert not verdict.ok and "false inequality" in verdict.reason
    assert reexecute(forged, trace_item(_JEWEL, "hold"), changed, "hold").ok  # v5's check is unchanged
    assert false_inequalities("So 7 < 3 and 10 >= 10.") == (2, ["7 < 3"])


# ---- ties to unwritten constants -----------------------------------------------------------------------------

_COWS_Q = ("A farmer has 4 cows and 4 chickens. Each chicken has 2 legs. How many legs do the farmer's animals "
           "have in total?")
_COWS_SOL = "The animals have 4*4 + 4*2 = <<4*4+4*2=24>>24 legs.\n#### 24"


def test_a_tie_to_an_unwritten_constant_is_held() -> None:
    """v6 tied the two written 4s and read the cows' 4 legs (never written) as one of them: "3 cows and 3
    chickens; each chicken has 3 legs", gold 18, right 21, and it passed re-execution. v7 knows that cows have 4
    legs unwritten, so the 4s are held and never move: here nothing is left to move and the item is refused."""
    item = _gsm(_COWS_Q, _COWS_SOL, "24")
    assert F(4) in world_constants(_COWS_Q) and F(4) not in world_constants("He has 4 cows and 4 chickens.")
    with pytest.raises(Untraceable, match="ambiguous"):
        trace_item(item)
    with pytest.raises(ValueError, match="^ambiguous"):
        perturb_item(item, seed=0)


def test_a_held_tie_lets_the_other_numbers_move() -> None:
    q = ("A farmer has 4 cows and 4 chickens. How many legs do the animals of 3 such farms have in total?")
    sol = "One farm's animals have 4*4 + 4*2 = <<4*4+4*2=24>>24 legs.\nThree farms have 24*3 = <<24*3=72>>72.\n#### 72"
    tr = trace_item(_gsm(q, sol, "72"))
    assert tr.ties == () and [tr.tokens[i].text for i in tr.inputs] == ["3"]
    assert {h[0] for h in tr.held} == {"4"}
    for seed in range(5):
        twin = perturb_item(_gsm(q, sol, "72"), seed=seed)
        farms = find_numbers(twin.question)[2].value
        assert "4 cows and 4 chickens" in twin.question and F(twin.answer) == 24 * farms != 72
    # v5 does not know the legs: the chickens' unwritten 2 is untraced there (as before)
    with pytest.raises(Untraceable, match="untraced"):
        trace_item(_gsm(q, sol, "72"), "hold")
