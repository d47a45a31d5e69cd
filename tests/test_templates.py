"""Program templates: the safe runner refuses every escape, the forms write numbers as golden, the checks refuse
what they should, and the shipped templates all pass checks 1-3."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from zcp_core.data import load_items
from zcp_core.errors import DataError
from zcp_core.reference.forms import AnswerForm, parse_form, write_answer, write_decimal
from zcp_core.reference.runner import Runner, Task
from zcp_core.reference.sandbox import ProgramError, check_program
from zcp_core.reference.template import load_templates, parse_template
from zcp_core.reference.template_build import check_template, template_twins

ROOT = Path(__file__).resolve().parents[1]
MATH = ROOT / "data" / "math500" / "test.jsonl"
ALGEBRA = {
    "source_id": "test/algebra/2584.json",
    "template": "If $f(x) = \\frac{{a}x-{b}}{x-{c}}$, what is the value of $f(-2) +f(-1)+f(0)$? Express your answer "
                "as a common fraction.",
    "variables": {"a": {"value": 3, "type": "int", "min": 2, "max": 9},
                  "b": {"value": 2, "type": "int", "min": 1, "max": 9},
                  "c": {"value": 2, "type": "int", "min": 1, "max": 9}},
    "constraints": ["denominator(answer) != 1"],
    "program": "answer = sum([Fraction(a*x - b, x - c) for x in range(-2, 1)])",
    "answer_form": {"kind": "fraction"},
    "written_by": "a test",
}


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


@pytest.fixture(scope="module")
def math_items():
    return {it.id: it for it in load_items(MATH)}


ESCAPES = {
    "import": "import os\nanswer = 1",
    "dunder import": "answer = __import__(1)",
    "open": "answer = open(1)",
    "attribute walk": "answer = (1).__class__",
    "attribute walk via a function": "answer = sqrt.__globals__",
    "string to sympy": "answer = sqrt('1')",
    "lambda": "f = lambda x: x\nanswer = f(1)",
    "recursion": "def f(n):\n    return f(n)\nanswer = f(1)",
    "while": "while 1:\n    pass\nanswer = 1",
    "eval": "answer = eval(1)",
    "keyword": "answer = min(1, key=abs)",
    "slice": "x = [1, 2]\nanswer = x[0:1]",
    "with": "with a:\n    answer = 1",
    "global": "global a\nanswer = 1",
    "subscript store": "x = [1]\nx[0] = 2\nanswer = 1",
    "underscore name": "_x = 1\nanswer = _x",
    "star args": "answer = max(*[1, 2])",
    "unknown function": "answer = getattr(1, 2)",
}
RUNAWAYS = {
    "tower": "answer = 10**10**9",
    "huge power": "answer = 2**9000",
    "huge product": "x = 2**4000\nanswer = x * x",
    "huge loop": "s = 0\nfor i in range(100000):\n    for j in range(100000):\n        s += 1\nanswer = s",
    "huge range": "answer = sum(range(10**9))",
    "list bomb": "answer = [0] * 10**9",
    "factorial bomb": "answer = factorial(10**6)",
    "cpu-bound sympy": "answer = divisor_count(2**300 + 7)",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_the_whitelist_refuses_escapes_with_a_rule_and_line(name):
    with pytest.raises(ProgramError) as e:
        check_program(ESCAPES[name], ["a"])
    assert "rule:" in str(e.value) and e.value.rule


def test_a_deeply_nested_program_is_refused_not_crashed():
    with pytest.raises(ProgramError):
        check_program("answer = " + "(" * 5000 + "1" + ")" * 5000)


def test_runaways_stop_in_the_worker_and_the_worker_goes_on(runner):
    tasks = [Task(RUNAWAYS[k], {}) for k in sorted(RUNAWAYS)] + [Task("answer = 6 * 7", {})]
    out = runner.run(tasks)
    for name, o in zip(sorted(RUNAWAYS), out, strict=False):
        assert not o.ok, name
        assert any(w in o.detail for w in ("integer size", "step budget", "Timeout", "numbers only")), (name, o)
    assert out[-1].ok and out[-1].answer == "42"


def test_no_escape_has_a_side_effect(runner, tmp_path):
    marker = tmp_path / "escaped"
    programs = [f"answer = __import__('os').system('touch {marker}')",
                f"answer = open('{marker}', 'w')",
                "answer = sqrt('__import__(\"os\").system(\"touch " + str(marker) + "\")')"]
    out = runner.run([Task(p, {}) for p in programs])
    assert all(not o.ok and o.failed == "program" for o in out)
    assert not marker.exists()


def test_the_interpreter_is_exact(runner):
    frac = parse_form("fraction")
    out = runner.run([Task("answer = 1 / 3 + 0.1", {}, form=frac), Task("answer = a ** -2", {"a": Fraction(2, 3)}, form=frac),
                      Task("answer = sqrt(8)", {}, form=AnswerForm(kind="latex")),
                      Task("answer = (n1, n2)", {"n1": 1, "n2": Fraction(1, 2)}, form=frac)])
    assert [o.answer for o in out] == ["\\frac{13}{30}", "\\frac{9}{4}", "2 \\sqrt{2}", "1, \\frac{1}{2}"]
    assert out[0].number == Fraction(13, 30) and out[3].number is None


@pytest.mark.parametrize(("value", "form", "written"), [
    (Fraction(14, 3), {"kind": "fraction"}, "\\frac{14}{3}"),
    (Fraction(-14, 3), {"kind": "fraction", "style": "dfrac"}, "-\\dfrac{14}{3}"),
    (Fraction(6, 3), {"kind": "fraction"}, "2"),
    (Fraction(3, 4), {"kind": "fraction", "style": "slash"}, "3/4"),
    (Fraction(1000), {"kind": "integer", "style": "commas"}, "1,000"),
    (Fraction(10000), {"kind": "integer", "style": "latex_commas"}, "10{,}000"),
    (Fraction(45), {"kind": "integer", "suffix": "^\\circ"}, "45^\\circ"),
    (Fraction(25, 2), {"kind": "decimal", "places": 2, "prefix": "\\$"}, "\\$12.50"),
    (Fraction(5, 1000), {"kind": "decimal", "places": 2}, "0.01"),
    (Fraction(-5, 1000), {"kind": "decimal", "places": 2}, "-0.01"),
    (Fraction(1, 3), {"kind": "decimal", "places": 0}, "0"),
])
def test_answer_forms(value, form, written):
    assert write_answer(value, parse_form(form)) == written


def test_write_decimal_rounds_half_up():
    assert write_decimal(Fraction(5, 2), 0) == "3" and write_decimal(Fraction(-5, 2), 0) == "-3"


def test_bad_answer_form_names_its_key():
    with pytest.raises(ValueError, match="answer_form.kind"):
        parse_form({"kind": "roman"})
    with pytest.raises(ValueError, match="answer_form.places"):
        parse_form({"kind": "decimal"})


@pytest.mark.parametrize(("change", "field"), [
    ({"program": "import os\nanswer = 1"}, "program"),
    ({"template": "no slots here"}, "template"),
    ({"variables": {"a": {"value": 3, "min": 5, "max": 9}}}, "variables.a.value"),
    ({"constraints": ["open(a)"]}, "constraints[0]"),
    ({"answer_form": {"kind": "roman"}}, "answer_form.kind"),
    ({"colour": "red"}, "colour"),
])
def test_a_bad_template_line_names_file_line_and_field(tmp_path, change, field):
    bad = {**ALGEBRA, **change, "source_id": "test/x.json"}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(ALGEBRA) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError) as e:
        load_templates(path)
    assert e.value.line == 2 and e.value.field == field, str(e.value)


def test_an_invalid_json_line_and_a_duplicate_are_located(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(ALGEBRA) + "\n{oops\n")
    with pytest.raises(DataError, match="line 2"):
        load_templates(path)
    path.write_text(json.dumps(ALGEBRA) + "\n" + json.dumps(ALGEBRA) + "\n")
    with pytest.raises(DataError, match="also on line 1"):
        load_templates(path)


def _check(runner, math_items, **change):
    t = parse_template({**ALGEBRA, **change})
    return check_template(t, math_items[t.source_id], runner)


def test_a_good_template_passes(runner, math_items):
    c = _check(runner, math_items)
    assert c.passed and c.render_exact and c.program_matches_gold and c.nontrivial and c.change_share >= 0.9
    assert set(c.changing_slots) == {"a", "b", "c"}


@pytest.mark.parametrize(("change", "kind"), [
    ({"template": ALGEBRA["template"].replace("common fraction", "fraction")}, "render"),
    ({"program": "answer = sum([Fraction(a*x + b, x - c) for x in range(-2, 1)])"}, "program"),
    ({"answer_form": {"kind": "fraction", "style": "dfrac"}}, "answer_form"),
    ({"program": "answer = Fraction(14, 3) + 0 * a * b * c"}, "trivial"),
    ({"program": "answer = sum([Fraction(3*x - 2, x - 2) for x in range(-2, 1)]) + 0 * a * b * c"}, "trivial"),
    ({"constraints": ["(a == 3) + (b == 2) + (c == 2) >= 2"],  # one slot at a time only: 1 draw in 2,600 passes
      "variables": {n: {**v, "max": 90} for n, v in ALGEBRA["variables"].items()}}, "constraints"),
])
def test_checks_refuse_with_their_reason(runner, math_items, change, kind):
    c = _check(runner, math_items, **change)
    assert not c.passed and c.reason.startswith(kind + ":"), c.reason


def test_twins_are_balanced_draws_with_their_verification(math_items):
    t = parse_template(ALGEBRA)
    sets = template_twins([math_items[t.source_id]], {t.source_id: t}, seed=0, twins=2)
    twins = [s.items[0] for s in sets]
    assert [x.id for x in twins] == ["test/algebra/2584.json-ref", "test/algebra/2584.json-ref2"]
    for k, tw in enumerate(twins, 1):
        ver = tw.metadata["verification"]
        assert ver["check"] == "template-v1" and ver["render_exact"] and ver["program_matches_gold"]
        assert tw.metadata["twin"] == k and tw.original_id == t.source_id
        assert tw.question != math_items[t.source_id].question and tw.answer != "\\frac{14}{3}"
        side = tw.metadata["side"]
        a = Fraction(*map(int, tw.answer.removeprefix("\\frac{").removesuffix("}").split("}{")))
        assert (a > Fraction(14, 3)) == (side["side"] == "larger")
    again = template_twins([math_items[t.source_id]], {t.source_id: t}, seed=0, twins=2)
    assert [s.items[0] for s in again] == twins  # deterministic per (seed, id)


def test_twins_keep_the_digits_of_each_number_and_take_the_one_side_that_can_at_a_boundary():
    """Answer 9: no larger answer has one digit, so every twin is smaller, says so (a fallback where the coin said
    larger), and keeps one digit; answer 3/7 keeps a one-digit numerator and denominator."""
    from zcp_core.reference.template_build import digit_lengths
    from zcp_core.schema import Item

    nine = parse_template({"source_id": "t/9", "template": "What is ${a}+{b}$?", "program": "answer = a + b",
                           "variables": {"a": {"value": 4, "type": "int", "min": 1, "max": 9},
                                         "b": {"value": 5, "type": "int", "min": 1, "max": 9}},
                           "answer_form": {"kind": "integer"}})
    frac = parse_template({"source_id": "t/f", "template": "What is $\\frac{{a}}{{b}}$ in lowest terms?",
                           "program": "answer = Fraction(a, b)",
                           "variables": {"a": {"value": 3, "type": "int", "min": 1, "max": 9},
                                         "b": {"value": 7, "type": "int", "min": 2, "max": 9}},
                           "constraints": ["denominator(answer) != 1"], "answer_form": {"kind": "fraction"}})
    items = [Item(id="t/9", question="What is $4+5$?", answer="9"),
             Item(id="t/f", question="What is $\\frac{3}{7}$ in lowest terms?", answer="\\frac{3}{7}")]
    sets = template_twins(items, {"t/9": nine, "t/f": frac}, seed=0, twins=4)
    got: dict[str, list] = {it.id: [] for it in items}
    for s in sets:
        for tw in s.items:
            got[tw.original_id].append(tw)
    assert len(got["t/9"]) == 4 and len(got["t/f"]) == 4
    for tw in got["t/9"]:
        side = tw.metadata["side"]
        assert int(tw.answer) < 9 and side["side"] == "smaller"
        assert side["fallback"] == (side["coin"] == "larger")
    assert any(tw.metadata["side"]["fallback"] for tw in got["t/9"])  # the coin said larger at least once
    assert all(digit_lengths(tw.answer) == (1, 1) for tw in got["t/f"])


SHIPPED = sorted((ROOT / "data" / "templates").glob("*.jsonl"))
DATASETS = {"math500": MATH, "gsm8k": ROOT / "data" / "gsm8k" / "test.jsonl"}


@pytest.mark.parametrize("path", [p for p in SHIPPED if not p.name.endswith(".solved.jsonl")], ids=lambda p: p.name)
def test_every_shipped_template_passes_checks_1_to_3(runner, path):
    items = {it.id: it for it in load_items(DATASETS[path.stem])}
    templates = load_templates(path)
    failed = [f"line {t.line} {sid}: {c.reason}" for sid, t in templates.items()
              if not (c := check_template(t, items[sid], runner)).passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("method", ["template", "auto"])
def test_reference_build_writes_checked_template_twins(tmp_path, capsys, method):
    from zcp_core.cli.main import main

    tpl = tmp_path / "t.jsonl"
    tpl.write_text(json.dumps(ALGEBRA) + "\n")
    out = tmp_path / "ref"
    assert main(["reference", "build", "--method", method, "--templates", str(tpl), "--dataset", str(MATH),
                 "--limit", "3", "--twins", "2", "--prior-model", "none", "--out", str(out), "--json"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["traced"] == 1 and s["failures_by_kind"]["no_template"] == 2
    assert s["twin_card"]["too_few_pairs"] is True and s["twin_card"]["log_ratio_ci"] is None
    if method == "auto":
        assert s["shares"] == {"numeric": 0, "template": 1, "items": 3}
    twins = [json.loads(x) for x in (out / "reference.jsonl").read_text().splitlines()]
    assert [t["id"] for t in twins] == ["test/algebra/2584.json-ref", "test/algebra/2584.json-ref2"]
    assert all(t["metadata"]["verification"]["check"] == "template-v1" for t in twins)
    assert main(["reference", "build", "--method", "template", "--templates", str(tpl), "--dataset", str(MATH),
                 "--limit", "3", "--prior-model", "none", "--out", str(tmp_path / "ref2")]) == 0
    assert "too few pairs for a twin card: 1" in capsys.readouterr().out


def test_check_templates_lists_refusals_by_line(tmp_path, capsys):
    from zcp_core.cli.main import main

    bad = {**ALGEBRA, "answer_form": {"kind": "fraction", "style": "dfrac"}}
    tpl = tmp_path / "t.jsonl"
    tpl.write_text(json.dumps(bad) + "\n")
    assert main(["reference", "check-templates", "--templates", str(tpl), "--dataset", str(MATH)]) == 1
    out = capsys.readouterr().out
    assert "line 1 (test/algebra/2584.json): answer_form:" in out and "0 of 1 templates pass" in out


def test_a_template_whose_draws_run_away_is_refused_as_slow(runner, math_items):
    slow = ("s = 0\nif a != 3:\n    for i in range(100000):\n        for j in range(100000):\n            s += 1\n"
            "answer = sum([Fraction(a*x - b, x - c) for x in range(-2, 1)]) + 0 * s")
    c = _check(runner, math_items, program=slow)
    assert not c.passed and c.reason.startswith("slow:"), c.reason
