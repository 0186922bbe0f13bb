"""The gate's policy file read as a release engineer writes it: a margin no number of items can show, a clause left
empty, and values that are no number are each refused in one `error:` line naming the file, the field and the value
(exit 2), never read as something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.figures import load_policy
from tests.figures.test_board import flags, write_run
from tests.figures.test_gate import gate_cli, policy


def refused(path: Path) -> str:
    with pytest.raises(InputError) as err:
        load_policy(path)
    return str(err.value)


def one_error_line(*args: Path | str) -> str:
    done = gate_cli(*args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), done.stdout + done.stderr
    return lines[0]


def test_a_zero_margin_is_refused_since_no_number_of_items_can_show_it(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(200, set(range(20))))
    same = write_run(tmp_path / "same", flags(200, set(range(20))), config={"temperature": 0.5})
    rule = policy(tmp_path / "p", "default:\n  accuracy: {max_drop: 0}\n")
    # every answer the same as the baseline's: a zero margin would still say NO-GO, on any number of items
    line = one_error_line(same, "--baseline", base, "--policy", rule)
    assert str(rule) in line and "default.accuracy.max_drop" in line
    assert "no number of items" in line and "0.02" in line  # why, and what to give instead
    assert "t.accuracy.max_drop" in refused(policy(tmp_path / "q", "t:\n  accuracy: {max_drop: 0.0}\n"))


def test_an_empty_clause_is_refused_and_never_drops_the_defaults(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(1000, set(range(200))))
    worse = write_run(tmp_path / "worse", flags(1000, set(range(250))), config={"temperature": 0.5})
    # the task's values commented out: YAML reads `accuracy:` as null, which would replace the default's clause
    text = "default:\n  accuracy: {max_drop: 0.02}\nt:\n  accuracy:\n  #  max_drop: 0.2\n  endpoint_errors: {max: 0}\n"
    line = one_error_line(worse, "--baseline", base, "--policy", policy(tmp_path / "p", text))
    assert "t.accuracy" in line and "empty" in line
    assert "default.ttft_p99" in refused(policy(tmp_path / "q", "default:\n  ttft_p99:\n"))
    assert "'t'" in refused(policy(tmp_path / "r", "default:\n  accuracy: {max_drop: 0.02}\nt:\n"))
    assert "default.accuracy.max_drop" in refused(policy(tmp_path / "s", "default:\n  accuracy: {max_drop: }\n"))


@pytest.mark.parametrize(
    ("clause", "value", "shown"),
    [
        ("accuracy: {max_drop: true}", "max_drop", "true"),
        ("accuracy: {max_drop: .nan}", "max_drop", ".nan"),
        ("accuracy: {max_drop: .inf}", "max_drop", ".inf"),
        ("accuracy: {max_drop: '0.02'}", "max_drop", "'0.02'"),
        ("ttft_p99: {max_ratio: .inf}", "max_ratio", ".inf"),
        ("ttft_p99: {max_ratio: false}", "max_ratio", "false"),
        ("output_tps: {min_ratio: .nan}", "min_ratio", ".nan"),
        ("output_tps: {min_ratio: -.inf}", "min_ratio", "-.inf"),
        ("endpoint_errors: {max: true}", "max", "true"),
        ("endpoint_errors: {max: .inf}", "max", ".inf"),
        ("truncated: {max_share: .nan}", "max_share", ".nan"),
        ("output_tokens: {within: .inf}", "within", ".inf"),
        ("output_tokens: {within: true}", "within", "true"),
    ],
)
def test_a_value_that_is_no_finite_number_is_refused_naming_field_and_value(
    tmp_path: Path, clause: str, value: str, shown: str
) -> None:
    line = refused(policy(tmp_path, f"default:\n  {clause}\n"))
    name = clause.partition(":")[0]
    assert f"default.{name}.{value}" in line and f"{shown} " in line and "number" in line, line


def test_a_value_that_is_no_number_is_one_error_line_at_the_command(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    cand = write_run(tmp_path / "cand", flags(20, set()), config={"temperature": 0.5})
    line = one_error_line(
        cand, "--baseline", base, "--policy", policy(tmp_path, "default:\n  ttft_p99: {max_ratio: .inf}\n")
    )
    assert "default.ttft_p99.max_ratio" in line and ".inf" in line


def test_numbers_written_as_yaml_1_2_writes_them_are_numbers(tmp_path: Path) -> None:
    # PyYAML reads `5e-2` (no dot) and `1.2e0` (no exponent sign) as text: a limit must be the number written
    read = load_policy(policy(tmp_path, "default:\n  accuracy: {max_drop: 5e-2}\n  ttft_p99: {max_ratio: 1.2e0}\n"))
    clauses = read.root["default"]
    assert clauses.accuracy is not None and clauses.accuracy.max_drop == 0.05
    assert clauses.ttft_p99 is not None and clauses.ttft_p99.max_ratio == 1.2


@pytest.mark.parametrize("encoding", ["utf-16", "latin-1"])
def test_a_policy_that_is_not_utf8_is_one_error_line_naming_the_file(tmp_path: Path, encoding: str) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    cand = write_run(tmp_path / "cand", flags(20, set()), config={"temperature": 0.5})
    path = tmp_path / "policy.yaml"
    path.write_bytes("# règle d'équipe\ndefault:\n  accuracy: {max_drop: 0.05}\n".encode(encoding))
    line = one_error_line(cand, "--baseline", base, "--policy", path)
    assert str(path) in line and "not UTF-8" in line, line


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("default: [1, 2]\n", "default: [1, 2] is a list, not clauses: give them as keys under it"),
        ("t: 0.02\n", "t: 0.02 is a number, not clauses"),
        ("", "the policy file is empty (no keys, only blank lines or comments)"),
        ("# accuracy: {max_drop: 0.02}\n", "the policy file is empty (no keys, only blank lines or comments)"),
        ("- accuracy\n", "a policy file must be a mapping of keys to values, not a list"),
    ],
)
def test_a_policy_of_the_wrong_shape_is_said_plainly(tmp_path: Path, text: str, said: str) -> None:
    path = policy(tmp_path / "p", text)
    assert refused(path).startswith(f"{path}: {said}")
    assert "valid dictionary" not in refused(path)
