"""Program templates: a question with named slots, variables with ranges, and a program that computes the answer.

One JSON line per item (``data/templates/<dataset>.jsonl``)::

    {"source_id": "test/algebra/2584.json",
     "template": "If $f(x) = \\frac{{a}x-{b}}{x-{c}}$, what is ...",
     "variables": {"a": {"value": 3, "type": "int", "min": 2, "max": 9},
                   "s": {"value": 5, "type": "int", "expr": "a + c"}},
     "constraints": ["a != c"],
     "program": "answer = Fraction(a*0 - b, 0 - c)",
     "answer_form": {"kind": "fraction"},
     "keep_order": ["a + b + c", "p * s"],
     "written_by": "how the template was written"}

A slot is ``{name}`` for a declared variable only, so LaTeX braces stay literal (``\\frac{{a}}{2}`` renders
``\\frac{3}{2}``). A variable has its original ``value``, a ``type`` (``int``, ``fraction``, ``decimal``), and
either a range (``min``, ``max``, ``step``; drawn uniformly from that grid) or an ``expr`` over drawn variables
(derived, evaluated by the runner). ``style`` says how it is written (:mod:`zcp_core.reference.forms`).
``program`` must set ``answer``; it runs only through :mod:`zcp_core.reference.runner`. ``keep_order`` (optional)
lists expressions (over the variables and ``answer``) that every twin keeps in the original's order: where two
compare ``<``, ``=`` or ``>`` on the original's values, they compare alike on a twin's ("the slices eaten, ``a + b +
c``, stay at most the slices there are, ``p * s``"), as numeric twins keep theirs (:mod:`zcp_core.reference.order`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, get_args

from zcp_core.errors import DataError
from zcp_core.reference.forms import (
    AnswerForm,
    Style,
    VarType,
    parse_form,
    write_decimal,
    write_fraction,
    write_int,
)
from zcp_core.reference.runner import Task
from zcp_core.reference.sandbox import FUNCTIONS, QUALIFIED, ProgramError, check_program

MAX_GRID = 10**6  # values in one variable's range


@dataclass(frozen=True)
class Variable:
    """One slot of a template.

    Attributes:
        name: Its name in the template, constraints and program.
        value: The original item's value.
        type: ``int``, ``fraction`` or ``decimal``.
        low: Smallest value drawn (None for a derived variable).
        high: Largest value drawn.
        step: Grid step (default 1, or the last decimal place of a decimal).
        expr: For a derived variable, its expression over the others (not drawn).
        style: How it is written (``plain``, ``commas``, ``word``; ``frac``, ``dfrac``, ``slash``).
        places: Decimal places of a decimal (default: the original's).
    """

    name: str
    value: Fraction
    type: VarType = "int"
    low: Fraction | None = None
    high: Fraction | None = None
    step: Fraction = Fraction(1)
    expr: str | None = None
    style: Style = "plain"
    places: int | None = None

    def grid(self) -> int:
        """How many values a draw can take."""
        if self.low is None or self.high is None:
            return 1
        return int((self.high - self.low) / self.step) + 1

    def draw(self, rng: random.Random) -> Fraction:
        """A value from the grid, uniformly."""
        assert self.low is not None
        return self.low + self.step * rng.randrange(self.grid())

    def write(self, v: Fraction) -> str:
        """``v`` written in this variable's style; ``ValueError`` when it cannot be (a fraction as an int)."""
        if self.type == "int":
            if v.denominator != 1:
                raise ValueError(f"{self.name} = {v} is not whole")
            return write_int(v.numerator, self.style)
        if self.type == "fraction":
            return write_fraction(v, self.style if self.style in ("frac", "dfrac", "tfrac", "slash") else "frac")
        return write_decimal(v, self.places if self.places is not None else 0)


@dataclass(frozen=True)
class Template:
    """One item's template (see the module docstring for the format).

    Attributes:
        source_id: The dataset's own id of the item.
        template: The question with ``{name}`` slots.
        variables: Drawn and derived variables, in file order.
        constraints: Expressions every draw must satisfy.
        program: Computes ``answer`` from the variables.
        answer_form: How the answer is written.
        written_by: How the template was written (the card says so).
        keep_order: Expressions every twin keeps in the original's order (see the module docstring).
        path: The file it came from.
        line: Its line there.
    """

    source_id: str
    template: str
    variables: tuple[Variable, ...]
    constraints: tuple[str, ...]
    program: str
    answer_form: AnswerForm
    written_by: str = ""
    keep_order: tuple[str, ...] = ()
    path: str = ""
    line: int = 0

    @property
    def drawn(self) -> tuple[Variable, ...]:
        """The variables a twin draws (not derived)."""
        return tuple(v for v in self.variables if v.expr is None)

    @property
    def derived(self) -> tuple[tuple[str, str], ...]:
        """``(name, expr)`` of the derived variables, in order."""
        return tuple((v.name, v.expr) for v in self.variables if v.expr is not None)

    def original(self) -> dict[str, Fraction]:
        """The original item's drawn values."""
        return {v.name: v.value for v in self.drawn}

    def task(self, env: Mapping[str, Fraction]) -> Task:
        """The runner task of one draw."""
        return Task(self.program, dict(env), self.derived, self.constraints, self.answer_form, self.keep_order)

    def render(self, values: Mapping[str, Fraction]) -> str:
        """The question with every slot written from ``values`` (drawn and derived)."""
        by_name = {v.name: v for v in self.variables}
        return _slots(by_name).sub(lambda m: by_name[m.group(1)].write(Fraction(values[m.group(1)])), self.template)


def _slots(by_name: Mapping[str, Variable]) -> re.Pattern[str]:
    names = sorted(by_name, key=len, reverse=True)
    return re.compile(r"\{(" + "|".join(map(re.escape, names)) + r")\}") if names else re.compile(r"(?!x)x")


def _num(raw: Any, where: str) -> Fraction:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValueError(f"{where}: expected a number, got {raw!r}")
    try:
        return Fraction(str(raw).replace(",", ""))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{where}: {raw!r} is not a number") from None


def _places(raw: Any) -> int:
    s = str(raw)
    return len(s.split(".", 1)[1]) if "." in s else 0


def _variable(name: str, d: Any) -> Variable:
    where = f"variables.{name}"
    if not name.isidentifier() or name.startswith("_") or name in FUNCTIONS or name in QUALIFIED or name == "answer":
        raise ValueError(f"{where}: not a usable name (an identifier, not starting with _, not a function)")
    if not isinstance(d, Mapping) or "value" not in d:
        raise ValueError(f"{where}: expected an object with a value")
    unknown = set(d) - {"value", "type", "min", "max", "step", "expr", "style", "places"}
    if unknown:
        raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    typ = d.get("type", "int")
    if typ not in get_args(VarType):
        raise ValueError(f"{where}.type: {typ!r} is not one of int, fraction, decimal")
    style = d.get("style", "frac" if typ == "fraction" else "plain")
    if style not in get_args(Style):
        raise ValueError(f"{where}.style: {style!r} is not one of {', '.join(get_args(Style))}")
    places = d.get("places", _places(d["value"]) if typ == "decimal" else None)
    value = _num(d["value"], f"{where}.value")
    if "expr" in d:
        if not isinstance(d["expr"], str) or {"min", "max", "step"} & set(d):
            raise ValueError(f"{where}.expr: a derived variable has an expression and no range")
        return Variable(name, value, typ, expr=d["expr"], style=style, places=places)
    if "min" not in d or "max" not in d:
        raise ValueError(f"{where}: a drawn variable needs min and max (or expr, if derived)")
    default_step = Fraction(1, 10**places) if typ == "decimal" and places else Fraction(1)
    v = Variable(name, value, typ, _num(d["min"], f"{where}.min"), _num(d["max"], f"{where}.max"),
                 _num(d["step"], f"{where}.step") if "step" in d else default_step, style=style, places=places)
    assert v.low is not None and v.high is not None
    if v.step <= 0 or v.low > v.high:
        raise ValueError(f"{where}: needs min <= max and step > 0")
    if (value - v.low) % v.step or not v.low <= value <= v.high:
        raise ValueError(f"{where}.value: the original {d['value']} is not on the grid min + k * step up to max")
    if v.grid() > MAX_GRID:
        raise ValueError(f"{where}: more than {MAX_GRID:,} values in the range")
    return v


def parse_template(rec: Any, path: str = "", line: int = 0) -> Template:
    """A :class:`Template` from one JSON record; ``ValueError`` names the field (``DataError`` via
    :func:`load_templates`). Every program and constraint is checked against the runner's whitelist."""
    if not isinstance(rec, Mapping):
        raise ValueError("expected a JSON object")
    for key, kind in (("source_id", str), ("template", str), ("variables", Mapping), ("program", str)):
        if not isinstance(rec.get(key), kind):
            raise ValueError(f"{key}: missing or not a {'string' if kind is str else 'object'}")
    unknown = set(rec) - {"source_id", "template", "variables", "constraints", "program", "answer_form", "written_by",
                          "keep_order"}
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: unknown field")
    variables = tuple(_variable(n, d) for n, d in rec["variables"].items())
    names = [v.name for v in variables]
    constraints = rec.get("constraints", [])
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise ValueError("constraints: expected a list of expressions")
    for i, c in enumerate(constraints):
        _checked(c, [*names, "answer"], "eval", f"constraints[{i}]")
    keep_order = rec.get("keep_order", [])
    if not isinstance(keep_order, list) or not all(isinstance(c, str) for c in keep_order) or len(keep_order) == 1:
        raise ValueError("keep_order: expected a list of at least two expressions")
    for i, c in enumerate(keep_order):
        _checked(c, [*names, "answer"], "eval", f"keep_order[{i}]")
    for v in variables:
        if v.expr is not None:
            _checked(v.expr, names, "eval", f"variables.{v.name}.expr")
    _checked(rec["program"], names, "exec", "program")
    form = parse_form(rec.get("answer_form", "integer"))
    by_name = {v.name: v for v in variables}
    used = set(_slots(by_name).findall(rec["template"]))
    missing = [n for n in names if n not in used]
    if missing:
        raise ValueError(f"template: variable {missing[0]} has no {{{missing[0]}}} slot")
    return Template(rec["source_id"], rec["template"], variables, tuple(constraints), rec["program"], form,
                    str(rec.get("written_by", "")), tuple(keep_order), str(path), line)


def _checked(source: str, names: list[str], mode: str, field: str) -> None:
    try:
        check_program(source, names, mode)
    except ProgramError as e:
        line = f"line {e.line}: " if e.line else ""
        raise ValueError(f"{field}: {line}{e.detail or e.rule} (rule: {e.rule})") from None


def load_templates(path: str | Path) -> dict[str, Template]:
    """Every template of a JSONL file, by ``source_id``; a bad line raises :class:`DataError` naming line and
    field (after reading the whole file, so the first of several errors is the one reported)."""
    path = Path(path)
    out: dict[str, Template] = {}
    first: DataError | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            t = parse_template(json.loads(raw), str(path), n)
        except json.JSONDecodeError as e:
            first = first or DataError(str(path), n, None, f"not valid JSON ({e.msg})")
            continue
        except ValueError as e:
            field, _, msg = str(e).partition(": ")
            first = first or DataError(str(path), n, field.split()[0] if msg else None, msg or str(e))
            continue
        if t.source_id in out:
            first = first or DataError(str(path), n, "source_id",
                                       f"{t.source_id} is also on line {out[t.source_id].line}")
            continue
        out[t.source_id] = t
    if first is not None:
        raise first
    return out


def shipped_templates(dataset: str | Path) -> Path | None:
    """``data/templates/<dataset folder>.jsonl`` when it exists (``math500`` for ``data/math500/test.jsonl``)."""
    from zcp_core.data import resolve_dataset

    path = resolve_dataset(f"data/templates/{resolve_dataset(dataset).parent.name}.jsonl")
    return path if path.exists() else None
