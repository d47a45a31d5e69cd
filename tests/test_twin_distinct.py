"""An item's K twins never repeat (numeric and template generators), and numeric twins keep the original's order
relations (generator v8): the pizza item's twins eat no more slices than the pizzas have."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from zcp_core.data import load_items
from zcp_core.reference import twins_per_item_histogram
from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.distinct import repeats, substitution_key
from zcp_core.reference.numeric import failure_kind, perturb_gsm8k, perturb_item
from zcp_core.reference.order import ORDER, ORDER_ALL, OrderRule, order_of
from zcp_core.reference.trace import trace_item
from zcp_core.schema import Item

ROOT = Path(__file__).resolve().parent.parent
K = 4
PIZZA_LINE = 1061  # data/gsm8k/test.jsonl: "Becky, Jake, and Silvia shared 4 pizzas. Each pizza had 8 slices..."


def _k_sets(items: list[Item], **kw: object) -> list:  # type: ignore[type-arg]
    """Twins 1..K as `zcp reference build --twins K --seed 0` builds them."""
    return [perturb_gsm8k(items, seed=k - 1, twin=k, **kw) for k in range(1, K + 1)]  # type: ignore[arg-type]


def _assert_distinct_and_numbered(sets: list, originals: list[Item]) -> dict[str, list[Item]]:  # type: ignore[type-arg]
    """No twin repeats another of its item (question or substitution); twins are numbered 1..n; each set says why
    an item lacks its twin."""
    per: defaultdict[str, list[Item]] = defaultdict(list)
    for s in sets:
        for t in s.items:
            per[str(t.original_id)].append(t)
    for oid, twins in per.items():
        assert len({t.question for t in twins}) == len(twins), f"{oid}: a repeated twin question"
        subs = [substitution_key(t.metadata["substitutions"]) for t in twins]
        assert len(set(subs)) == len(subs), f"{oid}: a repeated substitution"
        assert [t.metadata["twin"] for t in twins] == list(range(1, len(twins) + 1)), oid
    for k, s in enumerate(sets, 1):
        got = {t.original_id for t in s.items}
        why = {f.id: f.reason for f in s.failures}
        for it in originals:
            assert (it.id in got) != (it.id in why), f"set {k}: {it.id} neither has twin {k} nor a reason"
            if it.id in why and len(per.get(it.id, [])) >= 1:  # it has a twin 1: the reason says how many
                assert failure_kind(why[it.id]) == "distinct" and f"has {len(per[it.id])} distinct" in why[it.id]
    assert repeats(t for s in sets for t in s.items) == 0
    return per


def test_gsm8k_k4_twins_never_repeat(gsm8k_items: list[Item]) -> None:
    items = gsm8k_items[:150]
    sets = _k_sets(items)
    per = _assert_distinct_and_numbered(sets, items)
    hist = twins_per_item_histogram([t for s in sets for t in s.items], items)
    # measured: 0: 59, 2: 1, 3: 7, 4: 83 (each twin drawn alone, v7: 88 of 361 twins repeated one of their item's)
    assert hist[K] >= 75 and sum(hist.values()) == len(items) and sum(n * c for n, c in hist.items()) >= 340
    # twin 1 is drawn exactly as before (nothing to avoid), so K = 1 results stay valid
    assert [t.question for t in sets[0].items] == [t.question for t in perturb_gsm8k(items, seed=0).items]
    assert any(t.metadata.get("redraw") for twins in per.values() for t in twins)  # fresh seeds were needed


def test_independent_draws_repeated_a_twin_which_distinct_ones_do_not() -> None:
    """v7's twin k was drawn alone: the pizza item got the same twin (Becky at 20) as twins 1 and 4."""
    item = load_items(ROOT / "data" / "gsm8k" / "test.jsonl")[PIZZA_LINE - 1]
    alone = [perturb_item(item, seed=k - 1, twin=k, order=None).question for k in range(1, K + 1)]
    assert len(set(alone)) < K
    sets = _k_sets([item], order=None)
    _assert_distinct_and_numbered(sets, [item])
    assert sets[0].items[0].question == alone[0]


def test_math500_template_k4_twins_never_repeat() -> None:
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import template_twins

    templates = load_templates(ROOT / "data" / "templates" / "math500.jsonl")
    items = load_items(ROOT / "data" / "math500" / "test.jsonl")[:40]
    sets = template_twins(items, templates, seed=0, twins=K)
    _assert_distinct_and_numbered(sets, items)
    hist = twins_per_item_histogram([t for s in sets for t in s.items])
    assert sum(hist.values()) >= 15 and hist.get(K, 0) >= 15  # measured: 21 items, each with 4 distinct twins


def _slices(twin: Item) -> tuple[Fraction, Fraction]:
    """(slices eaten, slices there are) of a pizza twin: its answer, and pizzas * slices per pizza."""
    m = re.search(r"shared (\d+) pizzas\. Each pizza had (\d+) slices", twin.question)
    assert m, twin.question
    return Fraction(twin.answer), Fraction(m.group(1)) * Fraction(m.group(2))


def test_pizza_twins_eat_no_more_slices_than_there_are() -> None:
    """GSM8K test line 1061 eats 31 of 4 * 8 = 32 slices; v7's twin ate 71. v8 refuses every draw that crosses
    4 * 8, and the item has no draw left on both sides (the larger side only crosses it): it gets no twin, and its
    reason names the order rule."""
    item = load_items(ROOT / "data" / "gsm8k" / "test.jsonl")[PIZZA_LINE - 1]
    v7 = perturb_item(item, seed=0, order=None)
    eaten, there = _slices(v7)
    assert (eaten, there) == (71, 32)  # the motivating failure
    sets = _k_sets([item])
    assert all(not s.items for s in sets)
    assert failure_kind(sets[0].failures[0].reason) == "order"
    # the rule itself: Becky at 20 crosses 4 * 8; at 5 (Jake 2, Silvia 4, 11 in all) no product is crossed, but
    # the sum 4 + 8 is (and, under the widest rule, the question's 3 more slices)
    trace = trace_item(annotate_visible(item))
    becky = next(i for i, t in enumerate(trace.tokens) if t.text == "10")
    at20, at5 = ({becky: Fraction(20)}, [Fraction(x) for x in (17, 34, 71)]), ({becky: Fraction(5)}, [Fraction(2),
                                                                                        Fraction(4), Fraction(11)])
    products = order_of(trace, OrderRule(combos=("*",)))
    assert products.flip(trace, *at20) == "step 2's 14 < 4 * 8 (now 34 > 32)" and products.flip(trace, *at5) is None
    assert order_of(trace, ORDER).flip(trace, *at5) == "4 + 8 < step 2's 14 (now 12 > 4)"  # sums: at 5 too
    # the widest rule also refuses Becky at 5, for "4 pizzas" against Jake's 2 slices
    assert order_of(trace, ORDER_ALL).flip(trace, *at5) == "the question's 3 < step 1's 7 (now 3 > 2)"


def test_a_pizza_item_with_room_gets_twins_that_fit(tmp_path: Path) -> None:
    """4 pizzas of 12 slices, Becky at 13: 43 of 48 slices. Its v7 twins include one eating 63; v8's fit."""
    q = ("Becky, Jake, and Silvia shared 4 pizzas. Each pizza had 12 slices. Becky ate 3 more slices than Jake did. "
         "Silvia ate twice as many slices than Jake did. If Becky ate 13 slices, how many total slices did they eat?")
    sol = ("Jake ate 13-3 = <<13-3=10>>10 slices of pizza.\nSilvia ate 10*2 = <<10*2=20>>20 slices of pizza.\n"
           "Jake, Silvia, and Becky ate 13+10+20 = <<13+10+20=43>>43 slices all together.\n#### 43")
    path = tmp_path / "pizza.jsonl"
    path.write_text(json.dumps({"question": q, "answer": sol}) + "\n")
    item = load_items(path)[0]
    v7 = [t for s in _k_sets([item], order=None) for t in s.items]
    assert any(eaten > there for eaten, there in map(_slices, v7))
    v8 = [t for s in _k_sets([item]) for t in s.items]
    assert v8 and all(eaten <= there for eaten, there in map(_slices, v8))


def test_twins_per_item_histogram() -> None:
    def twin(orig: str, q: str) -> Item:
        return Item(id=f"{orig}-{q}", question=q, answer="1", original_id=orig)

    made = [twin("a", "x"), twin("a", "y"), twin("a", "x"), twin("b", "z"), twin("c", "u"), twin("c", "v")]
    originals = [Item(id=i, question="?", answer="1") for i in "abcd"]
    assert twins_per_item_histogram(made) == {1: 1, 2: 2}  # a's repeated "x" counts once
    assert twins_per_item_histogram(made, originals) == {0: 1, 1: 1, 2: 2}
    assert twins_per_item_histogram([], originals) == {0: 4}
    assert repeats(made) == 1


def test_a_template_keeps_the_order_it_names() -> None:
    """ALGEBRA's a = 3 > c = 2: with ``keep_order`` every twin keeps a > c; without it some twin does not."""
    from test_templates import ALGEBRA, MATH

    from zcp_core.reference.template import parse_template
    from zcp_core.reference.template_build import template_twins

    item = next(it for it in load_items(MATH) if it.id == ALGEBRA["source_id"])

    def twins(rec: dict) -> list[Item]:  # type: ignore[type-arg]
        t = parse_template(rec)
        return [x for s in template_twins([item], {t.source_id: t}, seed=0, twins=K) for x in s.items]

    def a_over_c(x: Item) -> bool:
        subs = x.metadata["substitutions"]
        return Fraction(subs["a"][1]) > Fraction(subs["c"][1])

    assert not all(a_over_c(x) for x in twins(ALGEBRA))
    kept = twins({**ALGEBRA, "keep_order": ["a", "c"]})
    assert len(kept) == K and all(a_over_c(x) for x in kept)
    with pytest.raises(ValueError, match="keep_order"):
        parse_template({**ALGEBRA, "keep_order": ["a"]})


def test_no_bundled_twin_file_repeats_a_twin_within_an_item() -> None:
    """The bundled lab twins and every bundled probe run's twins: no question twice for one item."""
    import json
    from collections import defaultdict

    root = Path(__file__).resolve().parent.parent / "data" / "examples"
    files = [root / "lab-direct-twins.jsonl", *sorted(root.glob("probe-*/items_reference.jsonl"))]
    assert len(files) >= 3
    for f in files:
        by_item: dict[str, list[str]] = defaultdict(list)
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                by_item[row["original_id"]].append(" ".join(row["question"].split()))
        repeats = {k: len(v) - len(set(v)) for k, v in by_item.items() if len(v) != len(set(v))}
        assert repeats == {}, (f.name, repeats)
