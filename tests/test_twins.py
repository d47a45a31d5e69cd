"""Numeric twins: correct (checked against hand-written solvers), matched in difficulty, carded, loadable."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction as F
from pathlib import Path

import pytest

from zcp_core.data import write_items_jsonl
from zcp_core.errors import DataError
from zcp_core.reference import (
    METHOD_NUMERIC,
    candidates,
    find_numbers,
    load_reference,
    perturb_gsm8k,
    perturb_item,
    reexecute,
    trace_item,
    twin_card,
)
from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.cues import cued_constants
from zcp_core.reference.draw import answer_digits, unit_cap
from zcp_core.reference.numeric import keeps_roundness
from zcp_core.reference.trace import CALC, Untraceable
from zcp_core.schema import Item

# ---- the twins issue 13 found wrong: each is now rejected or right, for many seeds --------------------------
# Each solver reads the twin *question's* numbers (by position, as written) and solves the problem by hand,
# never looking at the generated solution.


def _q81(n: list[F]) -> F:  # Two girls each got 1/6 of the 24 liters. A boy got 6 liters. Left?
    girls, frac, liters, boy = n
    return liters - girls * liters * frac - boy


def _q11(n: list[F]) -> F:  # 60 downloads; 3x in month 2; reduced by 30% in month 3; total over three months
    first, times, pct, months = n
    assert months == 3  # "over the three months" counts the months the story has; never rewritten
    second = times * first
    return first + second + second * (1 - pct / 100)


def _q350(n: list[F]) -> F:  # food $25/week, treats $20/month, medicine $100/month, 4 weeks a month: per year
    food, treats, medicine, weeks = n
    return (food * weeks + treats + medicine) * 12


def _q1076(n: list[F]) -> F:  # roses $2 each or $15 a dozen; 15 roses; five $5 bills; change in quarters
    each, dozen, roses, bills, bill = n
    assert 12 <= roses < 24
    return (bills * bill - dozen - (roses - 12) * each) * 4


def _q46(n: list[F]) -> F:  # 4 hours per article; 5 on Monday, 2/5 more on Tuesday, twice Tuesday on Wednesday
    hours, monday, frac, days = n
    assert days == 3
    tuesday = monday + frac * monday
    return hours * (monday + tuesday + 2 * tuesday)


def _q317(n: list[F]) -> F:  # bought 20, store had 50, father gave 2/5 of 20, each weighs 2 kg: total weight
    bought, store, frac, weight = n
    return (bought + store + frac * bought) * weight


def _q422(n: list[F]) -> F:  # 50 cats; four boats take 5 each; 3/5 of the rest run away: left
    cats, boats, each, frac = n
    rest = cats - boats * each
    return rest - frac * rest


def _q1302(n: list[F]) -> F:  # 9 + 4 + 5 cookies; ate 3 (one of each flavor); 2; 2; bakes 4 of each flavor
    oat, choc, sugar, ate, one, lunch, gives, bakes = n
    assert ate == 3 and one == 1  # one of each of the three flavors
    return oat + choc + sugar - ate - lunch - gives + bakes * 3


SOLVERS: dict[int, Callable[[list[F]], F]] = {  # by line of data/gsm8k/test.jsonl (issue 13 named them gsm8k-test-N)
    81: _q81, 11: _q11, 350: _q350, 1076: _q1076, 46: _q46, 317: _q317, 422: _q422, 1302: _q1302,
}


# 1076: its 4 quarters per dollar equals step 5's change, five $5 bills share a value; 1302: 9 = 4 + 5
# among its first numbers, and its 3 cookies are also its 3 flavors. Holding all that leaves nothing to change.
REFUSED = {1076, 1302}
# v5 (issue 23): 81's answer 10 has no smaller whole value that ends in a zero, so the roundness rule refuses it
# at every seed (its twins were right under v4; the solver above still pins the item's reading).
REFUSED_ROUNDNESS = {81}


@pytest.mark.parametrize("item_id", sorted(SOLVERS))
def test_known_bad_twins_are_right_or_rejected(gsm8k_items: list[Item], item_id: int) -> None:
    item = gsm8k_items[item_id - 1]
    solve = SOLVERS[item_id]
    assert solve([t.value for t in find_numbers(item.question)]) == F(item.answer)  # the solver is right
    made = 0
    for seed in range(12):
        try:
            twin = perturb_item(item, seed=seed)
        except ValueError as e:
            # v5 also refuses an item whose other side has no twin, or whose twins all lose the answer's roundness
            assert str(e).split(":")[0] in {"ambiguous", "untraced", "no_valid_draw", "one_side", "roundness"}, e
            continue
        made += 1
        nums = [t.value for t in find_numbers(twin.question)]
        assert solve(nums) == F(twin.answer), (seed, twin.question, twin.answer)
        fracs = [t.text for t in find_numbers(twin.question) if t.kind == "fraction"]
        assert fracs == [t.text for t in find_numbers(item.question) if t.kind == "fraction"]
    if item_id in REFUSED or item_id in REFUSED_ROUNDNESS:
        assert made == 0
    else:
        assert made >= 6, f"{item_id}: only {made} of 12 seeds gave a twin"


def test_held_values_are_reported(gsm8k_items: list[Item]) -> None:
    by_line = dict(enumerate(gsm8k_items, 1))
    tr = trace_item(by_line[11])  # "three times" and "three months": which 3 feeds is unknown
    assert sorted(tr.tokens[i].text for i in tr.inputs) == ["30", "60"]
    assert [h[0] for h in tr.held] == ["three", "three"]
    tr = trace_item(by_line[350], "hold")  # v5: medicine $100 equals step 1's 25*4: both kept, so 25 and 4 too
    assert [tr.tokens[i].text for i in tr.inputs] == ["20"]
    assert {h[0] for h in tr.held} == {"25", "100", "4"}
    twin = perturb_item(by_line[350], ambiguity="hold")
    assert "$100 per month" in twin.question and "4 weeks" in twin.question
    assert twin.metadata["held"] and all(len(h) == 2 for h in twin.metadata["held"])
    # v6: the medicine's $100 follows step 1 (25*4), so the twin is right whichever the chain's 100 reads
    tr = trace_item(by_line[350])
    assert sorted(tr.tokens[i].text for i in tr.inputs) == ["20", "25"] and [h[0] for h in tr.held] == ["4"]
    assert [(tr.tokens[ti].text, j) for ti, j in tr.bound] == [("100", 0)]
    twin = perturb_item(by_line[350])
    food, _, medicine, weeks = (t.value for t in find_numbers(twin.question))
    assert weeks == 4 and medicine == 4 * food != 100 and twin.metadata["bound"] == [["100", 1]]


def _gsm(q: str, sol: str, ans: str, i: str = "t-1") -> Item:
    calcs = [{"expr": a.strip(), "result": b.strip()} for a, b in CALC.findall(sol)]
    return Item(id=i, question=q, answer=ans, solution=sol, source="gsm8k", metadata={"calculations": calcs})


def test_implicit_constants_never_change() -> None:
    # 7 days a week is implied; 2 weeks and 3 pages are the inputs
    item = _gsm("Tom reads 3 pages every day. How many pages does he read in 2 weeks?",
                "A week has 3*7=<<3*7=21>>21 pages.\nSo 21*2=<<21*2=42>>42 pages.\n#### 42", "42")
    for seed in range(5):
        twin = perturb_item(item, seed=seed)
        a, b = (c["expr"] for c in twin.metadata["calculations"])
        assert a.endswith("*7")
        pages, weeks = (t.value for t in find_numbers(twin.question))
        assert F(twin.answer) == pages * 7 * weeks


def test_percent_inverse_is_held() -> None:
    # "25% off" is "/4" in the solution; the 4 lessons must not be taken for it, and 25% must stay
    item = _gsm("A lesson costs $80, but 25% less for a veteran. Charlie gives 4 lessons to veterans. "
                "How much does he earn?",
                "He takes 80/4=<<80/4=20>>20 off.\nA lesson is 80-20=<<80-20=60>>60.\n"
                "So 4*60=<<4*60=240>>240.\n#### 240", "240")
    for seed in range(5):
        try:
            twin = perturb_item(item, seed=seed)
        except ValueError:
            continue
        price, pct, lessons = (t.value for t in find_numbers(twin.question))
        assert pct == 25 and F(twin.answer) == lessons * price * F(3, 4)


def test_stated_sum_is_held() -> None:
    # "7 fish: 3 orange and 4 white" states 7 = 3 + 4 although no step adds them
    item = _gsm("Bob had 7 fish. 3 were orange, and 4 were white. He bought 17 more. How many fish now?",
                "He has 7+17=<<7+17=24>>24 fish.\n#### 24", "24")
    twin = perturb_item(item)
    total, orange, white, bought = (t.value for t in find_numbers(twin.question))
    assert (total, orange, white) == (7, 3, 4) and F(twin.answer) == total + bought


HOLDS = [  # (question, solution, answer, solver of the twin's question numbers, numbers that must stay)
    # "the three measurements" counts values the story has: never "the two measurements"
    ("Jared types 47 words per minute, then 52, then 57. What is the average of the three measurements?",
     "47+52+57=<<47+52+57=156>>156\n156/3=<<156/3=52>>52\n#### 52", "52",
     lambda n: (n[0] + n[1] + n[2]) / n[3], {3: 3}),
    # 5 days and two other days make the week the question asks about
    ("They ride 4 times a day for 5 days, and twice as often on the two other days. How many rides a week?",
     "4*5=<<4*5=20>>20\n4*2=<<4*2=8>>8\n8*2=<<8*2=16>>16\n20+16=<<20+16=36>>36\n#### 36", "36",
     lambda n: n[0] * n[1] + 2 * n[0] * n[2], {1: 5, 2: 2}),
    # "for 6 hours" is two hours and four hours, though no step adds them
    ("For two hours he sold 25 cups per hour. In the next four hours he sold 10 cups per hour. "
     "How many cups did he sell in 6 hours?",
     "2*25=<<2*25=50>>50\n4*10=<<4*10=40>>40\n50+40=<<50+40=90>>90\n#### 90", "90",
     lambda n: n[0] * n[1] + n[2] * n[3], {0: 2, 2: 4, 4: 6}),
    # three people share equally: the 3 is them, not Robert's 3 pounds
    ("Robert had 3 pounds of candy, Cindy had 5 pounds of candy, and Aaron had 4 pounds of candy. If they share "
     "equally, how much does each get?", "3+5+4=<<3+5+4=12>>12\n12/3=<<12/3=4>>4\n#### 4", "4",
     lambda n: (n[0] + n[1] + n[2]) / 3, {0: 3}),
    # a rectangle has 2 long sides: the 2 slats per foot cannot be told from them
    # (v5: 16 feet long, answer 104; with 15, the answer 100 has no smaller twin ending in two zeros, and v5 refuses
    # an item whose twins on either side all lose the answer's roundness)
    ("A rectangular fence is 16 feet long and 10 feet wide. It needs 2 slats per foot. How many slats?",
     "2*16=<<2*16=32>>32\n2*10=<<2*10=20>>20\n32+20=<<32+20=52>>52\n52*2=<<52*2=104>>104\n#### 104", "104",
     lambda n: 2 * (n[0] + n[1]) * n[2], {2: 2}),
    # "4 times as much" splits 100 into 5 parts: the 5 is the 4 plus one
    ("Jeff and Brad divide 100 dollars. Jeff gets 4 times as much as Brad. How much does Jeff get?",
     "100/5=<<100/5=20>>20\n20*4=<<20*4=80>>80\n#### 80", "80", lambda n: n[0] * n[1] / (n[1] + 1), {1: 4}),
    # "joined by another 2 children" triples the group, "by another child" doubles it
    ("There are 6 children. Each child is joined by another child. Then each child is joined by another 2 "
     "children. How many children are there?", "6*2=<<6*2=12>>12\n12*3=<<12*3=36>>36\n#### 36", "36",
     lambda n: n[0] * 2 * (n[1] + 1), {1: 2}),
]


@pytest.mark.parametrize("q, sol, ans, solve, stay", HOLDS)
def test_stated_relations_are_held(q: str, sol: str, ans: str, solve: Callable[[list[F]], F],
                                   stay: dict[int, int]) -> None:
    item = _gsm(q, sol, ans)
    assert solve([t.value for t in find_numbers(q)]) == F(ans)
    made = 0
    for seed in range(6):
        try:
            twin = perturb_item(item, seed=seed)
        except ValueError as e:
            assert str(e).startswith(("ambiguous", "no_valid_draw", "one_side", "roundness")), e
            continue
        made += 1
        nums = [t.value for t in find_numbers(twin.question)]
        assert all(nums[i] == v for i, v in stay.items()), twin.question
        assert solve(nums) == F(twin.answer), twin.question
    assert made >= 3


def test_bare_annotation_is_never_a_question_number() -> None:
    # "7.5 / .5 = <<15=15>>": the 15 is computed in the prose, not the question's 15 pounds
    sol = ("30*.25=<<30*.25=7.5>>7.5\n15-7.5=<<15-7.5=7.5>>7.5\nHe removes 7.5 / .5 = <<15=15>>15 toys\n#### 15")
    item = _gsm("He must remove 15 pounds. Comics weigh .25 pounds and toys .5 pounds. He removes 30 comics. "
                "How many toys must he remove?", sol, "15")
    with pytest.raises(Untraceable, match="untraced"):
        trace_item(item)
    fixed = annotate_visible(item)  # the prose's calculation replaces the bare annotation
    assert "7.5 / .5 = <<7.5/.5=15>>15" in (fixed.solution or "")


def test_hidden_step_computation_is_refused() -> None:
    # "the comforter has 24 green squares" (18 + 6, no annotation): 24 is also 4 * 6 of the question, but an
    # earlier result can make it too, so it is a computation the prose hides, not a held constant
    item = _gsm("A quilt has 14 red squares, 4 more blue squares than red, 6 more green than blue, and 12 fewer "
                "white than green. How many squares?",
                "Blue: 14+4=<<14+4=18>>18.\nGreen: 24.\nWhite: 12.\nTotal 14+18+24+12=<<14+18+24+12=68>>68\n#### 68",
                "68")
    with pytest.raises(ValueError, match="untraced: 24"):
        perturb_item(item)


def test_percentages_of_one_whole_still_fit() -> None:
    item = _gsm("He spent 15 hours on shows. This was 30% of his time. He spent 40% of his time sightseeing. "
                "How many hours did he spend sightseeing?",
                "15/.3=<<15/.3=50>>50 hours\n50*.4=<<50*.4=20>>20\n#### 20", "20")
    for seed in range(8):
        try:
            twin = perturb_item(item, seed=seed)
        except ValueError:
            continue
        hours, a, b = (t.value for t in find_numbers(twin.question))
        assert a + b <= 100 and F(twin.answer) == hours / (a / 100) * (b / 100)


def test_same_seed_same_twins(gsm8k_items: list[Item]) -> None:
    a, b = perturb_gsm8k(gsm8k_items[:80], seed=3), perturb_gsm8k(gsm8k_items[:80], seed=3)
    assert a == b and a != perturb_gsm8k(gsm8k_items[:80], seed=4)


def test_reexecution_catches_tampering(gsm8k_items: list[Item]) -> None:
    item = gsm8k_items[0]
    twin = perturb_item(item)
    trace = trace_item(annotate_visible(item))
    new = {i: find_numbers(twin.question)[i].value for i in trace.inputs}
    assert reexecute(twin, trace, new).ok
    v = twin.metadata["verification"]
    assert v["method"] == METHOD_NUMERIC and v["reexecuted"] is True and v["gold_check"] == "pass"
    assert v["recomputed_answer"] == twin.answer
    first = find_numbers(twin.question)[trace.inputs[0]]
    bad_q = twin.question[:first.start] + str(int(first.value) + 1) + twin.question[first.end:]
    bad = Item(id=twin.id, question=bad_q, answer=twin.answer, solution=twin.solution, original_id=item.id)
    assert not reexecute(bad, trace, new).ok
    bad = Item(id=twin.id, question=twin.question, answer=str(int(twin.answer) + 1), solution=twin.solution)
    assert "differs from the twin gold" in reexecute(bad, trace, new).reason


def test_annotate_visible_golden() -> None:
    item = _gsm("Q", "Heels cost 33 * 2 = $<<33*2=66>>66.\nSo the boots cost 99 + 5 = $104, not 2 + 2 = 5.\n#### 104",
                "104")
    out = annotate_visible(item)
    assert "99 + 5 = $<<99+5=104>>104" in (out.solution or "") and "2 + 2 = 5" in (out.solution or "")
    assert [c["expr"] for c in out.metadata["calculations"]] == ["33*2", "99+5"]
    assert annotate_visible(_gsm("Q", "1+1=<<1+1=2>>2\n#### 2", "2")).metadata.get("annotated_in_prose") is None


# ---- matched difficulty ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("v, kw, want", [
    (F(16), {}, [11, 12, 13, 14, 17, 18, 19, 21, 22, 23, 24, 26, 27, 28, 29, 31, 32]),  # not round stays not round
    (F(25), {}, [15, 35, 45]),  # a multiple of 5 stays one, not of 10
    (F(50), {}, [30, 40, 60, 70, 80, 90]),  # one significant digit: any, same zeros
    (F(100), {}, [200]), (F(2), {}, [3, 4]), (F(9), {}, [5, 6, 7, 8]),
    (F(5, 2), {}, [F(3, 2), F(7, 2), F(9, 2)]),  # $2.50 -> $1.50, $3.50, $4.50
    (F(100), {"percent": True}, []),  # 100% cannot grow
    (F(80), {"percent": True}, [40, 50, 60, 70, 90]),
    (F(50), {"cap": F(52)}, [30, 40]),  # "50 weeks a year"
])
def test_candidates_golden(v: F, kw: dict, want: list) -> None:
    assert candidates(v, **kw) == [F(w) for w in want]


def test_candidates_keep_shape() -> None:
    rng = random.Random(0)
    for _ in range(300):
        v = F(rng.choice([rng.randint(2, 9), rng.randint(10, 99), rng.randint(1, 99) * 10, rng.randint(100, 9999)]))
        for c in candidates(v):
            assert len(str(int(c))) == len(str(int(v))) and v / 2 <= c <= 2 * v and c != v
            assert len(str(int(c))) - len(str(int(c)).rstrip("0")) == len(str(int(v))) - len(str(int(v)).rstrip("0"))


@pytest.mark.parametrize("after, cap", [(" days a week", 7), ("-hour day", 24), (" weeks a year", 52),
                                        (" months of the year", 12), (" minutes per hour", 60), (" apples", None)])
def test_unit_cap_golden(after: str, cap: int | None) -> None:
    assert unit_cap(after) == (None if cap is None else F(cap))


@pytest.mark.parametrize("q, has, lacks", [
    ("He bought 2 dozen eggs.", [12], [7]), ("She works 5 days a week for 3 weeks.", [7], [24, 60]),
    ("25% off", [100, F(1, 100)], []), ("It takes 30 minutes; how many hours?", [60], []),
    ("apples, pears, and figs", [3], []), ("twice as many boys as girls", [2, 3], []),
    ("4 weeks in a month", [4], [30]), ("Tom has 5 apples.", [0, 1], [2, 3, 12]),
    ("vanilla or chocolate, one of each for everyone", [2], []), ("a rectangular fence", [2, 4], []),
    ("Robert, Cindy and Aaron share equally", [3], []),
])
def test_cued_constants_golden(q: str, has: list, lacks: list) -> None:
    cued = cued_constants(q)
    assert all(F(h) in cued for h in has) and not any(F(x) in cued for x in lacks)


def test_answer_digits() -> None:
    assert [answer_digits(F(x)) for x in ("7", "12", "12.5", "0.5", "-40")] == [1, 2, 3, 2, 2]


@pytest.fixture(scope="module")
def full_set(gsm8k_items: list[Item]):  # type: ignore[no-untyped-def]
    return perturb_gsm8k(gsm8k_items, seed=0)


@pytest.mark.heavy
def test_full_test_set_coverage_and_card(gsm8k_items: list[Item], full_set) -> None:  # type: ignore[no-untyped-def]
    share = len(full_set.items) / len(gsm8k_items)
    # Measured 0.549 (724/1319) at seed 0 on v8 (its order rule refuses 2), 0.550 (726/1319) on v7 and v6 (v5: 0.527,
    # v4: 0.670, v3: 0.663). Issue 23 asks at least 0.64: v8 does not meet it; v5's two rules refuse 64 items (one_side) and 126 (roundness), and 203 stay ambiguous:
    # benchmarks/results/twin_card.md, twin_coverage_limits.md.
    assert share >= 0.54
    card = twin_card(gsm8k_items, full_set.items)
    assert card.same_digits_share >= 0.8
    assert 0.4 <= card.larger_share <= 0.6
    lo, hi = card.median_answer
    assert 0.75 <= hi / lo <= 1.33
    lead1 = card.leading_digit_share[0]
    assert abs(lead1[0] - lead1[1]) <= 0.06  # the skew toward a leading 1 survives
    for t in full_set.items:
        v = t.metadata["verification"]
        assert v["reexecuted"] is True and v["gold_check"] == "pass" and v["method"] == METHOD_NUMERIC
        side = t.metadata["side"]  # v5: the answer moves where the coin said, never a fallback
        assert (F(t.answer) > F(t.metadata["original_answer"])) == (side["side"] == "larger")
        assert side["side"] == side["coin"] and side["fallback"] is False and side["both_sides"] is True
        assert keeps_roundness(F(t.answer), F(t.metadata["original_answer"]))  # the hard roundness rule
    assert card.fallback_share == 0.0 and card.trailing_zero_rate[0] == card.trailing_zero_rate[1]
    assert card.multiple_of_5_rate[0] == card.multiple_of_5_rate[1]


#: sha256 of the whole GSM8K test twin set at seed 0 (every twin's JSON line, in order), per generator version.
#: A generator change that moves any twin must come with a new version string and a new line here. (v6's line was
#: re-pinned once before it landed: its ``inputs_changed`` metadata stopped counting tied and bound numbers; every
#: question and gold stayed the same, checked against the set its results files were measured on.)
TWIN_SET_SHA256 = {"numeric-perturbation-v4": "ea27a878a15e6785f0aaad67de44f825f0e68a26e8bd81d8b6b3bff06110047e",
                   "numeric-perturbation-v5": "ed43929325c1d66e88dd41da36c00b6dd9edd3c6f5974640deee8d69509d0e87",
                   "numeric-perturbation-v6": "325f97f8cae75355e50d9474220480131e37bfad8d002c8b1e7ef6c4e894e380",
                   "numeric-perturbation-v7": "dcce16bff587be6e409ba8f6ce4c30826c347c08c6f814860ff35f04425e4e1a",
                   # v8: v7's twins but the two its order rule refuses, each labelled v8 (no question or gold changed)
                   "numeric-perturbation-v8": "aa789be2122cb7a31f9d3e56be2153333c28c6106bd21ac0de7e960d4becf705"}


@pytest.mark.heavy
def test_twin_set_hash_is_pinned_to_the_version(full_set) -> None:  # type: ignore[no-untyped-def]
    import hashlib
    import json

    blob = "".join(json.dumps(t.to_dict(), sort_keys=True) + "\n" for t in full_set.items)
    got = hashlib.sha256(blob.encode()).hexdigest()
    assert METHOD_NUMERIC in TWIN_SET_SHA256, f"new generator version {METHOD_NUMERIC}: pin its twin set hash {got}"
    assert got == TWIN_SET_SHA256[METHOD_NUMERIC], (
        f"the seed-0 GSM8K twin set changed ({got}) while the version string stayed {METHOD_NUMERIC}: "
        "a generator change needs a new version")


@pytest.mark.heavy
def test_twins_depend_on_content_not_on_the_file(tmp_path: Path, gsm8k_items: list[Item], full_set) -> None:  # type: ignore[no-untyped-def]
    """The same 400 items give byte-identical ids and twins from the whole file and from a renamed copy."""
    from zcp_core.data import load_items

    src = Path(__file__).resolve().parent.parent / "data" / "gsm8k" / "test.jsonl"
    copy = tmp_path / "my_subset-renamed.jsonl"
    copy.write_text("\n".join(src.read_text().splitlines()[500:900]) + "\n")
    sub = load_items(copy)
    assert [it.id for it in sub] == [it.id for it in gsm8k_items[500:900]]
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    ids = {it.id for it in sub}
    write_items_jsonl(a, [t for t in full_set.items if t.original_id in ids])  # built over the whole file
    write_items_jsonl(b, perturb_gsm8k(sub, seed=0).items)
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 0


def test_twin_card_golden() -> None:
    orig = [Item(id=f"o{i}", question="q", answer=a) for i, a in enumerate(["10", "20", "30", "40"])]
    twins = [Item(id=f"o{i}-ref", question="q", answer=a, original_id=f"o{i}")
             for i, a in enumerate(["12", "18", "35", "400"])]
    card = twin_card(orig, twins)
    assert card.n_pairs == 4 and card.digits_mean == (2.0, 2.25) and card.same_digits_share == 0.75
    assert card.median_answer == (25.0, 26.5) and card.larger_share == 0.75
    assert card.leading_digit_share[0] == (0.25, 0.5) and card.leading_digit_share[3] == (0.25, 0.25)
    df = card.frame()
    assert list(df.columns) == ["metric", "original", "twin"] and len(df) == 11 + 9
    assert card.trailing_zero_rate == (1.0, 0.25) and card.multiple_of_5_rate == (1.0, 0.5)
    assert card.log_ratio_mean == pytest.approx((math.log(1.2) + math.log(0.9) + math.log(35 / 30) + math.log(10)) / 4)
    assert card.neutral_prior_diff is None and card.fallback_share == 0.0
    assert card.as_dict()["leading_digit_share"]["1"] == [0.25, 0.5]
    # four pairs: the table keeps its values, the printed card says too few pairs rather than show intervals
    assert card.markdown() == "too few pairs for a twin card: 4 with numeric answers (at least 10 needed)"
    assert card.as_dict()["too_few_pairs"] is True and card.as_dict()["log_ratio_ci"] is None
    assert "| median answer | 25 | 26.5 |" in replace(card, n_pairs=10).markdown()


# ---- loading a reference run ----------------------------------------------------------------------------------

def test_load_reference_folder_or_file(tmp_path: Path, gsm8k_items: list[Item]) -> None:
    twins = list(perturb_gsm8k(gsm8k_items[:10]).items)
    write_items_jsonl(tmp_path / "reference.jsonl", twins)
    assert load_reference(tmp_path) == twins
    assert load_reference(tmp_path / "reference.jsonl") == twins
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no reference.jsonl"):
        load_reference(empty)
    write_items_jsonl(tmp_path / "plain.jsonl", gsm8k_items[:2])
    with pytest.raises(DataError, match="original_id"):
        load_reference(tmp_path / "plain.jsonl")


def test_round_rule_preferred_trades_roundness_for_coverage(gsm8k_items: list[Item]) -> None:
    """``preferred`` gives every item ``required`` refuses for roundness a twin, records whether it kept the
    roundness, and leaves every other twin as it was (only its method string says the rule)."""
    dogs = next(it for it in gsm8k_items if it.question.startswith("John takes care of 10 dogs"))
    refused, same = 0, 0
    for it in [dogs, *gsm8k_items[:40]]:
        try:
            strict: Item | None = perturb_item(it, seed=0)
        except ValueError as e:
            if not str(e).startswith("roundness:"):
                continue
            strict = None
        loose = perturb_item(it, seed=0, round_rule="preferred")
        assert loose.metadata["method"] == loose.metadata["verification"]["method"] == METHOD_NUMERIC + "+round-preferred"
        side = loose.metadata["side"]
        assert side["both_sides"] is True and side["fallback"] is False and side["side"] == side["coin"]
        assert side["roundness_kept"] == keeps_roundness(F(loose.answer), F(it.answer))
        if strict is None:
            refused += 1
            continue
        same += 1
        assert side["roundness_kept"] is True
        assert (loose.id, loose.question, loose.answer, loose.solution) == \
            (strict.id, strict.question, strict.answer, strict.solution)
    # 35 = 10 dogs x .5 h x 7 days: no smaller multiple of 5 is reachable, so `required` refuses it
    assert refused >= 1 and same >= 10


def test_round_rule_unknown_is_refused(gsm8k_items: list[Item]) -> None:
    with pytest.raises(ValueError, match="unknown round_rule 'prefered'"):
        perturb_gsm8k(gsm8k_items[:3], round_rule="prefered")  # type: ignore[arg-type]


# ---- v6: ties and binds (issue 23) -------------------------------------------------------------------------

_TIE_Q = ("Ali decided to call 3 families. Then each family calls 3 other families, and each of those calls 3 "
          "more. How many families get a call from the last group?")
_TIE_SOL = "First round: 3*3=<<3*3=9>>9 families.\nThird round: 9*3=<<9*3=27>>27 families.\n#### 27"


def test_v6_ties_numbers_written_alike_and_v5_holds_them() -> None:
    item = _gsm(_TIE_Q, _TIE_SOL, "27")
    with pytest.raises(Untraceable, match="ambiguous"):
        trace_item(item, "hold")
    tr = trace_item(item)
    assert tr.ties == ((0, 1, 2),) and tr.inputs == (0,) and tr.bound == ()
    twin = perturb_item(item, seed=0)
    (new,) = {t.value for t in find_numbers(twin.question)}  # the three 3s move together
    assert new != 3 and F(twin.answer) == new ** 3
    assert twin.metadata["tied"] == [["3", "3", "3"]] and twin.metadata["method"] == METHOD_NUMERIC
    assert twin.metadata["verification"]["retrace"] == "traced"


_BIND_Q = ("Mr Boarden needs 24 mosaic tiles for every square foot. How many tiles does he need to cover two "
           "thirds of his 36 sq ft bathroom?")
_BIND_SOL = ("Two thirds of the bathroom is 36/3*2 = <<36/3=12>>12 * 2 = <<12*2=24>>24 sq ft.\n"
             "He needs 24*24=<<24*24=576>>576 tiles.\n#### 576")


def test_a_number_written_more_often_than_read_is_held_not_tied(gsm8k_items: list[Item]) -> None:
    """Line 554: "2 cases ... 2 bottles for each guest", one literal 2 (2*24) and 70+70 for the guests' 2: tying
    the two 2s moved the bottles per guest while 70+70 stayed (the wrong twin the v6 precision sample found)."""
    item = gsm8k_items[553]
    assert "2 bottles of water for each guest" in item.question
    tr = trace_item(annotate_visible(item))
    assert tr.ties == () and [h[0] for h in tr.held] == ["2", "2"] and "read 1 times" in tr.held[0][1]
    assert "2 bottles of water for each guest" in perturb_item(item).question


def test_v6_binds_a_number_to_the_step_it_equals() -> None:
    item = _gsm(_BIND_Q, _BIND_SOL, "576")
    with pytest.raises(Untraceable, match="ambiguous"):
        trace_item(item, "hold")
    tr = trace_item(item)
    tiles = next(i for i, t in enumerate(tr.tokens) if t.text == "24")
    assert tr.bound == ((tiles, 1),)  # "24 tiles" follows step 2's 24 square feet
    twin = perturb_item(item, seed=0)
    nums = [t.value for t in find_numbers(twin.question)]
    area = nums[2] / 3 * 2  # "two thirds" stays; 36 moved
    assert nums[0] == area != 24 and F(twin.answer) == area * area
    assert twin.metadata["bound"] == [["24", 2]]


def test_a_number_a_step_reads_is_never_bound_to_it() -> None:
    # step 3's 20 is step 2's result or the question's 20; step 1 reads that 20, so it can not follow step 2:
    # it is held (and step 2 with it), and only the 3 moves
    q = ("Tom has 20 marbles and gives 15 away. He trades each marble he has left for 4 stickers. Each sticker "
         "is worth 3 cents. How many cents are his stickers worth?")
    sol = "20-15=<<20-15=5>>5 left. 5*4=<<5*4=20>>20 stickers. 20*3=<<20*3=60>>60 cents.\n#### 60"
    tr = trace_item(_gsm(q, sol, "60"))
    assert tr.bound == () and [tr.tokens[i].text for i in tr.inputs] == ["3"]
    assert {"20", "15", "4"} <= {h[0] for h in tr.held}


def test_the_lab_splits_on_v5_twins() -> None:
    """The lab's pool and probes use v5 (``LAB_AMBIGUITY``): its cached builds and examples were made on it.
    Pinned: the v5 twins of the first 300 GSM8K test items, byte for byte as v5 made them."""
    import hashlib
    import json

    from zcp_core.data import load_items
    from zcp_core.lab.config import LAB_AMBIGUITY

    assert LAB_AMBIGUITY == "hold"
    items = load_items(Path(__file__).resolve().parent.parent / "data" / "gsm8k" / "test.jsonl")[:300]
    rs = perturb_gsm8k(items, seed=0, ambiguity=LAB_AMBIGUITY)
    blob = "".join(json.dumps(t.to_dict(), sort_keys=True) + "\n" for t in rs.items)
    assert rs.method == "numeric-perturbation-v5" and len(rs.items) == 171
    assert hashlib.sha256(blob.encode()).hexdigest() == "bb1d08be1bd108f655f7fc28b250bf96de273c656e9995bb9f4ca2fb4d6b0650"
