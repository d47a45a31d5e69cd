"""A bad flag value gets at most three lines: the error naming the flag, its own hint, and where the usage is."""

from __future__ import annotations

import pytest

from zcp_core.cli.main import main


@pytest.mark.parametrize(("argv", "flag", "hint"), [
    (["probe", "--dataset", "x", "--twins", "0"], "--twins", "leave --twins out for the default"),
    (["probe", "--dataset", "x", "--limit", "-5"], "--limit", "leave --limit out to use every item"),
    (["probe", "--dataset", "x", "--limit", "0"], "--limit", "leave --limit out to use every item"),
    (["release", "r", "--out", "o", "--min-confidence", "1.5"], "--min-confidence", "between 0 and 1"),
    (["probe", "--dataset", "x", "--fdr", "1"], "--fdr", "false-discovery level"),
])
def test_a_bad_value_is_three_lines_with_the_flags_own_hint(argv, flag, hint, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 3 and f"argument {flag}" in err[0] and hint in err[1]
    assert err[-1] == f"see `zcp {argv[0]} --help`" and not any(x.startswith("usage:") for x in err)


def test_twins_never_gets_the_limit_hint(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["probe", "--dataset", "x", "--twins", "0"])
    assert "every item" not in capsys.readouterr().err


def test_every_json_output_is_strict(capsys) -> None:
    """`--json` goes through one printer: NaN and infinities (numpy ones too, nested) print as null."""
    import argparse
    import json

    import numpy as np

    from zcp_core.cli.common import emit

    def strict(c: str) -> None:
        raise ValueError(f"non-strict JSON constant {c}")

    emit(argparse.Namespace(json=True), {"a": float("nan"), "b": [np.float64("inf"), 1.5, {"c": np.nan}],
                                         "d": np.int64(3), "e": (float("-inf"),)}, "text")
    out = json.loads(capsys.readouterr().out, parse_constant=strict)
    assert out == {"a": None, "b": [None, 1.5, {"c": None}], "d": 3, "e": [None]}
