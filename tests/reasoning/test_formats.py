"""Reasoning formats are data: a user's YAML file adds a format with no code."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.reasoning.formats import builtin_formats, load_format, resolve_formats
from qualeval.reasoning.split import split_completion


def test_builtin_formats_load() -> None:
    assert {"think", "mistral", "harmony", "command-r"} <= set(builtin_formats())


def test_user_format_file_splits_content(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text('name: seed\nstart: "<seed:think>"\nend: "</seed:think>"\nmodels: [seed-oss]\n')
    formats = resolve_formats([str(path)])
    got = split_completion(
        content="<seed:think>hmm 12</seed:think>7", field=None, finish_reason="stop", formats=formats
    ).completion
    assert (got.reasoning, got.content, got.reasoning_source) == ("hmm 12", "7", "inline:paired")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name: x\nstart: '<a>'\n", "field 'end': Field required"),
        ("name: x\nstart: '<a>'\nend: '</a>'\ncolour: red\n", "field 'colour': Extra inputs are not permitted"),
        ("name: x\nstart: '  '\nend: '</a>'\n", "field 'start': a marker must not be empty"),
        ("name: x\nkind: bubbles\nstart: '<a>'\nend: '</a>'\n", "field 'kind'"),
        ("- just\n- a list\n", "must be a mapping"),
        ("name: [unclosed\n", "invalid YAML"),
    ],
)
def test_bad_format_files_name_file_and_field(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_format(path)
    assert str(err.value).startswith(str(path))
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_non_utf8_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_format(path)
    with pytest.raises(InputError, match="cannot read"):
        load_format(tmp_path / "absent.yaml")


def test_unknown_format_name() -> None:
    with pytest.raises(InputError, match="unknown reasoning format 'nope'"):
        resolve_formats("think,nope")
