"""A safe runner for template programs: an AST whitelist, a small interpreter, and a limited worker process.

Template programs are data people share, so they never run as ordinary Python. :func:`check_program` parses a
program and refuses, with its line and the rule, anything outside a small language:

* statements: assignment (to names, or a tuple of names), augmented assignment, ``if``/``elif``/``else``,
  ``for NAME in range(...)`` with ``break``/``continue``, and ``pass``;
* expressions: numbers, names, arithmetic (``+ - * / // % **``), comparisons, ``and``/``or``/``not``,
  conditional expressions, list and tuple literals, integer indexing, and list comprehensions over ``range``;
* calls of the functions in :data:`FUNCTIONS` only (``min``, ``max``, ``sum``, ``abs``, ``math.gcd``, ``comb``,
  ``factorial``, ``fractions.Fraction`` and a named set of sympy functions), by name or as ``math.X``,
  ``fractions.X`` or ``sympy.X``.

There are no strings (sympy parses strings with ``eval``, so none may reach it), no imports, no attribute other
than those qualified names, no function definitions (so no recursion), no ``while``, and no I/O. The interpreter
walks the checked tree itself: ``/`` between whole numbers is an exact :class:`~fractions.Fraction`, a decimal
literal is read exactly (``0.1`` is ``1/10``), integers are capped at :data:`MAX_BITS` bits *before* a power or
product is computed, and every program has a budget of :data:`MAX_STEPS` steps. :class:`Runner` evaluates in a
separate process with CPU-time and memory limits, so a sympy call that runs away kills only its worker.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

MAX_BITS = 4096  # about 1,200 decimal digits: far beyond any benchmark answer, far below a memory bomb
MAX_STEPS = 200_000  # interpreter steps per evaluation
MAX_RANGE = 100_000  # elements of one range()
EVAL_CPU_SECONDS = 2.0  # CPU time of one evaluation in the worker (sympy included)
WORKER_CPU_SECONDS = 900  # the worker's whole life (RLIMIT_CPU)
WORKER_MEMORY = 2 * 1024**3  # bytes of address space (RLIMIT_AS)

_SYMPY = ("sqrt", "Rational", "Integer", "pi", "E", "I", "oo", "sin", "cos", "tan", "cot", "sec", "csc", "asin",
          "acos", "atan", "atan2", "log", "exp", "simplify", "factor", "expand", "cancel", "together", "radsimp",
          "floor", "ceiling", "binomial", "isprime", "prime", "primefactors", "divisors",
          "divisor_count", "totient", "root", "cbrt", "Abs", "sign", "re", "im", "conjugate", "arg", "deg", "rad",
          "mod_inverse", "igcd", "ilcm", "Min", "Max", "trigsimp", "sqrtdenest", "nextprime", "prevprime")
_PLAIN = ("min", "max", "sum", "abs", "range", "len", "int", "round", "gcd", "lcm", "comb", "perm", "factorial",
          "isqrt", "Fraction", "numerator", "denominator", "floor_div", "ceil")
#: Every name a program may call or read besides its variables, with the qualified forms accepted for it.
FUNCTIONS: tuple[str, ...] = _PLAIN + _SYMPY
QUALIFIED = {"math": ("gcd", "lcm", "comb", "perm", "factorial", "isqrt", "floor", "ceil", "sqrt", "pi"),
             "fractions": ("Fraction",), "sympy": _SYMPY}


class ProgramError(ValueError):
    """A program broke a rule (``rule``) at ``line``, or failed while running."""

    def __init__(self, rule: str, line: int | None = None, detail: str = "") -> None:
        self.rule, self.line, self.detail = rule, line, detail
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}{detail or rule} (rule: {rule})")


_STMTS = (ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Pass, ast.Break, ast.Continue)
_EXPRS = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.List,
          ast.Tuple, ast.Subscript, ast.ListComp, ast.GeneratorExp, ast.Attribute)
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd, ast.Not, ast.And,
        ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_CTX = (ast.Load, ast.Store, ast.comprehension)


def _qualified(node: ast.Attribute) -> str:
    if not isinstance(node.value, ast.Name) or node.value.id not in QUALIFIED:
        raise ProgramError("no attributes", node.lineno, "only math.X, fractions.X and sympy.X may be named")
    if node.attr.startswith("_") or node.attr not in QUALIFIED[node.value.id]:
        raise ProgramError("whitelisted functions only", node.lineno, f"{node.value.id}.{node.attr} is not allowed")
    return node.attr


def check_program(source: str, names: Sequence[str] = (), mode: str = "exec") -> ast.AST:
    """Parse ``source`` and check it against the whitelist; raises :class:`ProgramError` naming line and rule.

    Args:
        source: The program (``mode="exec"``) or a constraint (``mode="eval"``).
        names: The template's variables, which the program may read.
        mode: ``exec`` for a program, ``eval`` for one expression.
    """
    try:
        tree = ast.parse(source, mode=mode)
    except SyntaxError as e:
        raise ProgramError("syntax", e.lineno, f"not valid syntax: {e.msg}") from None
    allowed = set(FUNCTIONS) | set(names) | set(QUALIFIED)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Import | ast.ImportFrom):
            raise ProgramError("no imports", line, "import is not allowed")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            raise ProgramError("no definitions", line, f"{type(node).__name__} is not allowed (no recursion)")
        if isinstance(node, ast.While):
            raise ProgramError("for over range only", line, "while is not allowed")
        if isinstance(node, ast.Module | ast.Expression) or isinstance(node, _CTX + _OPS):
            continue
        if isinstance(node, ast.cmpop | ast.operator | ast.unaryop | ast.boolop):
            raise ProgramError("whitelisted operators only", line, f"operator {type(node).__name__} is not allowed")
        if not isinstance(node, _STMTS + _EXPRS):
            raise ProgramError("whitelisted syntax only", line, f"{type(node).__name__} is not allowed")
        if isinstance(node, ast.Constant) and not (isinstance(node.value, int | float) and not isinstance(node.value, complex)):
            raise ProgramError("numbers only", line, f"literal {node.value!r} is not allowed (no strings)")
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise ProgramError("no underscore names", line, f"name {node.id} starts with _")
            if isinstance(node.ctx, ast.Load) and node.id not in allowed and not _assigned(tree, node.id):
                raise ProgramError("known names only", line, f"name {node.id} is not a variable or allowed function")
            if isinstance(node.ctx, ast.Store) and node.id in FUNCTIONS:
                raise ProgramError("known names only", line, f"{node.id} names an allowed function")
        if isinstance(node, ast.Attribute):
            _qualified(node)
        if isinstance(node, ast.Call):
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise ProgramError("positional arguments only", line, "keywords and * are not allowed")
            if not isinstance(node.func, ast.Name | ast.Attribute):
                raise ProgramError("whitelisted functions only", line, "only named functions may be called")
            fn = node.func.id if isinstance(node.func, ast.Name) else _qualified(node.func)
            if fn not in FUNCTIONS and fn not in QUALIFIED["math"]:
                raise ProgramError("whitelisted functions only", line, f"{fn} is not an allowed function")
        if isinstance(node, ast.For | ast.comprehension):
            it = node.iter
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
                raise ProgramError("for over range only", line, "loops run over range(...) only")
            if isinstance(node, ast.For) and node.orelse:
                raise ProgramError("whitelisted syntax only", line, "for ... else is not allowed")
        if isinstance(node, ast.Assign | ast.AugAssign | ast.For) or isinstance(node, ast.comprehension):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                elts = t.elts if isinstance(t, ast.Tuple) else [t]
                if not all(isinstance(e, ast.Name) for e in elts):
                    raise ProgramError("assign to names only", line, "only names (or a tuple of names) are assigned")
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) > 2:
            raise ProgramError("whitelisted syntax only", line, "at most two for clauses in a comprehension")
    return tree


def _assigned(tree: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(tree))


def _bits(v: Any) -> int:
    if isinstance(v, bool):
        return 1
    if isinstance(v, int):
        return v.bit_length()
    if isinstance(v, Fraction):
        return max(v.numerator.bit_length(), v.denominator.bit_length())
    return 0


def _exact(v: Any) -> bool:
    return isinstance(v, int | Fraction)


def _cap(v: Any, line: int | None) -> Any:
    if _bits(v) > MAX_BITS:
        raise ProgramError("integer size", line, f"a number grew past {MAX_BITS} bits")
    if isinstance(v, list | tuple) and len(v) > MAX_RANGE:
        raise ProgramError("integer size", line, "a list grew too long")
    return v


def _pow(a: Any, b: Any, line: int | None) -> Any:
    if isinstance(b, int | Fraction) and abs(Fraction(b)) > 10_000:
        raise ProgramError("integer size", line, "an exponent above 10,000")
    if _exact(a) and isinstance(b, int) and _bits(a) * abs(b) > MAX_BITS:
        raise ProgramError("integer size", line, f"a power past {MAX_BITS} bits")
    if _exact(a) and isinstance(b, int):
        return Fraction(a) ** b if b < 0 else a ** b
    if _exact(a) and isinstance(b, Fraction) and b.denominator == 1:
        return _pow(a, int(b), line)
    return _sym(a) ** _sym(b)  # a fractional power stays exact in sympy (sqrt(2), not 1.414...)


def _sym(v: Any) -> Any:
    from sympy import Integer, Rational

    if isinstance(v, bool):
        return Integer(int(v))
    if isinstance(v, int):
        return Integer(v)
    if isinstance(v, Fraction):
        return Rational(v.numerator, v.denominator)
    return v


def _div(a: Any, b: Any) -> Any:
    if _exact(a) and _exact(b):
        if b == 0:
            raise ZeroDivisionError("division by zero")
        return Fraction(a) / Fraction(b)
    return _sym(a) / _sym(b)


def _mul(a: Any, b: Any, line: int | None) -> Any:
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        raise ProgramError("numbers only", line, "lists cannot be multiplied")
    if _bits(a) + _bits(b) > MAX_BITS + 1:
        raise ProgramError("integer size", line, f"a product past {MAX_BITS} bits")
    return a * b


def _mixed(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Apply ``op`` exactly, moving to sympy when one side is symbolic (Fraction + sqrt(2))."""
    def run(a: Any, b: Any) -> Any:
        if _exact(a) and _exact(b):
            return op(a, b)
        return op(_sym(a), _sym(b))
    return run


_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: _mixed(lambda a, b: a + b), ast.Sub: _mixed(lambda a, b: a - b),
    ast.FloorDiv: _mixed(lambda a, b: a // b), ast.Mod: _mixed(lambda a, b: a % b),
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _range(*args: Any) -> range:
    if not all(isinstance(a, int) or (isinstance(a, Fraction) and a.denominator == 1) for a in args):
        raise ProgramError("for over range only", None, "range() takes whole numbers")
    r = range(*(int(a) for a in args))
    if len(r) > MAX_RANGE:
        raise ProgramError("integer size", None, f"range() of more than {MAX_RANGE:,} numbers")
    return r


def _factorial(n: Any) -> int:
    if int(n) != n or not 0 <= n <= 2000:
        raise ProgramError("integer size", None, "factorial() of a whole number up to 2,000 only")
    return math.factorial(int(n))


def _comb(n: Any, k: Any) -> int:
    if int(n) != n or int(k) != k or not 0 <= n <= 100_000:
        raise ProgramError("integer size", None, "comb() of whole numbers up to 100,000 only")
    return math.comb(int(n), int(k))


def _perm(n: Any, k: Any) -> int:
    if int(n) != n or int(k) != k or not 0 <= n <= 100_000:
        raise ProgramError("integer size", None, "perm() of whole numbers up to 100,000 only")
    return math.perm(int(n), int(k))


def _whole(v: Any) -> int:
    if isinstance(v, Fraction) and v.denominator != 1:
        raise ProgramError("whole numbers", None, f"{v} is not a whole number")
    return int(v)


def _table() -> dict[str, Any]:
    """The callable table (sympy imported here, in the worker, never at import time)."""
    import sympy

    table: dict[str, Any] = {
        "min": min, "max": max, "sum": lambda xs, *s: sum(xs, *s) if s else sum(xs, 0), "abs": abs,
        "range": _range, "len": len, "int": int, "round": round,
        "gcd": lambda *a: math.gcd(*(_whole(x) for x in a)), "lcm": lambda *a: math.lcm(*(_whole(x) for x in a)),
        "comb": _comb, "perm": _perm, "factorial": _factorial, "isqrt": lambda n: math.isqrt(_whole(n)),
        "Fraction": lambda a, b=1: Fraction(a) / Fraction(b),
        "numerator": lambda v: Fraction(v).numerator, "denominator": lambda v: Fraction(v).denominator,
        "floor_div": lambda a, b: a // b, "ceil": lambda v: math.ceil(v) if _exact(v) else sympy.ceiling(v),
    }
    for name in _SYMPY:
        if hasattr(sympy, name):
            table.setdefault(name, getattr(sympy, name))
    table["floor"] = lambda v: math.floor(v) if _exact(v) else sympy.floor(v)
    table["sqrt"] = lambda v: sympy.sqrt(_sym(v))
    table["factorial"] = _factorial
    return table


@dataclass
class _Frame:
    env: dict[str, Any]
    table: Mapping[str, Any]
    steps: int = 0


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _tick(f: _Frame, line: int | None) -> None:
    f.steps += 1
    if f.steps > MAX_STEPS:
        raise ProgramError("step budget", line, f"more than {MAX_STEPS:,} steps")


def _binop(op: ast.operator, a: Any, b: Any, line: int | None) -> Any:
    if isinstance(op, ast.Pow):
        return _cap(_pow(a, b, line), line)
    if isinstance(op, ast.Mult):
        return _cap(_mul(a, b, line), line)
    if isinstance(op, ast.Div):
        return _cap(_div(a, b), line)
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        raise ProgramError("numbers only", line, "arithmetic on a list")
    return _cap(_BIN[type(op)](a, b), line)


def _eval(node: ast.AST, f: _Frame) -> Any:
    line = getattr(node, "lineno", None)
    _tick(f, line)
    match node:
        case ast.Constant(value=bool() as v):
            return v
        case ast.Constant(value=int() as v):
            return _cap(v, line)
        case ast.Constant(value=float() as v):
            return Fraction(repr(v))  # the decimal as written, exactly
        case ast.Name(id=name):
            if name in f.env:
                return f.env[name]
            if name in f.table:
                return f.table[name]
            raise ProgramError("known names only", line, f"{name} is used before it is set")
        case ast.Attribute(attr=attr):
            return f.table[attr] if attr in f.table else getattr(math, attr)
        case ast.BinOp(left=l, op=op, right=r):
            return _binop(op, _eval(l, f), _eval(r, f), line)
        case ast.UnaryOp(op=op, operand=x):
            v = _eval(x, f)
            return (not v) if isinstance(op, ast.Not) else (-v if isinstance(op, ast.USub) else +v)
        case ast.BoolOp(op=bop, values=vals):
            last = None
            for v in vals:
                last = _eval(v, f)
                if bool(last) != isinstance(bop, ast.And):  # and: stop at a false value; or: at a true one
                    return last
            return last
        case ast.Compare(left=l, ops=ops, comparators=cs):
            a = _eval(l, f)
            for cop, c in zip(ops, cs, strict=True):
                b = _eval(c, f)
                if not bool(_CMP[type(cop)](a, b)):
                    return False
                a = b
            return True
        case ast.IfExp(test=t, body=b, orelse=o):
            return _eval(b, f) if _eval(t, f) else _eval(o, f)
        case ast.Call(func=fn, args=args):
            vals = [_eval(a, f) for a in args]
            return _cap(_eval(fn, f)(*vals), line)
        case ast.List(elts=elts) | ast.Tuple(elts=elts):
            vals = [_eval(e, f) for e in elts]
            return vals if isinstance(node, ast.List) else tuple(vals)
        case ast.Subscript(value=v, slice=s):
            seq, idx = _eval(v, f), _eval(s, f)
            if not isinstance(seq, list | tuple):
                raise ProgramError("numbers only", line, "only lists and tuples are indexed")
            return seq[_whole(idx)]
        case ast.ListComp(elt=elt, generators=gens) | ast.GeneratorExp(elt=elt, generators=gens):
            acc: list[Any] = []
            _comprehend(elt, list(gens), f, acc)
            return _cap(acc, line)
    raise ProgramError("whitelisted syntax only", line, f"{type(node).__name__} is not allowed")


def _comprehend(elt: ast.expr, gens: list[ast.comprehension], f: _Frame, out: list[Any]) -> None:
    g, rest = gens[0], gens[1:]
    for v in _eval(g.iter, f):
        _assign(g.target, v, f)
        if all(_eval(c, f) for c in g.ifs):
            if rest:
                _comprehend(elt, rest, f, out)
            else:
                out.append(_eval(elt, f))


def _assign(target: ast.AST, value: Any, f: _Frame) -> None:
    if isinstance(target, ast.Name):
        f.env[target.id] = value
        return
    assert isinstance(target, ast.Tuple)
    vals = list(value)
    if len(vals) != len(target.elts):
        raise ProgramError("assign to names only", getattr(target, "lineno", None), "tuple sizes differ")
    for t, v in zip(target.elts, vals, strict=True):
        _assign(t, v, f)


def _exec(body: Sequence[ast.stmt], f: _Frame) -> None:
    for st in body:
        _tick(f, st.lineno)
        if isinstance(st, ast.Assign):
            v = _eval(st.value, f)
            for t in st.targets:
                _assign(t, v, f)
        elif isinstance(st, ast.AugAssign):
            assert isinstance(st.target, ast.Name)
            if st.target.id not in f.env:
                raise ProgramError("known names only", st.lineno, f"{st.target.id} is used before it is set")
            f.env[st.target.id] = _binop(st.op, f.env[st.target.id], _eval(st.value, f), st.lineno)
        elif isinstance(st, ast.If):
            _exec(st.body if _eval(st.test, f) else st.orelse, f)
        elif isinstance(st, ast.For):
            for v in _eval(st.iter, f):
                _assign(st.target, v, f)
                try:
                    _exec(st.body, f)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(st, ast.Break):
            raise _Break
        elif isinstance(st, ast.Continue):
            raise _Continue


def run_program(tree: ast.AST, env: Mapping[str, Any], table: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run a checked program (or evaluate a checked expression) in-process; the final variables, or
    ``{"value": ...}`` for an expression. Use :class:`Runner` for untrusted programs (limits, own process)."""
    f = _Frame(dict(env), table if table is not None else _table())
    if isinstance(tree, ast.Expression):
        return {"value": _eval(tree.body, f)}
    assert isinstance(tree, ast.Module)
    _exec(tree.body, f)
    return f.env
