"""The hostile-input reader under the spec loader: size, encoding, tags, aliases, positions."""

from __future__ import annotations

import codecs
import os
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from majob.spec.positions import Positions
from majob.spec.safe_yaml import (
    MAX_ALIAS_NODES,
    MAX_ALIASES,
    MAX_SPEC_BYTES,
    MAX_VALUES,
    YamlProblem,
    YamlRefused,
    compose,
    decode,
    read_text,
    to_plain,
)


def _plain(text: str) -> tuple[Any, list[YamlProblem], Positions]:
    document = compose(text)
    assert document is not None
    positions = Positions("spec.yaml")
    value, problems = to_plain(document, positions, text)
    return value, problems, positions


def _value(text: str) -> Any:
    value, problems, _ = _plain(text)
    assert problems == []
    return value


def _problems(text: str) -> list[tuple[int, int, tuple[str | int, ...], str]]:
    _, problems, _ = _plain(text)
    return [(p.line, p.col, p.loc, p.message) for p in problems]


def _refused(data: bytes) -> tuple[int, int, str]:
    with pytest.raises(YamlRefused) as caught:
        decode(data)
    problem = caught.value.problem
    return problem.line, problem.col, problem.message


# -- size ------------------------------------------------------------------------------------


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"a: 1\n" + b"#" * (MAX_SPEC_BYTES - 6) + b"\n")
    assert len(read_text(spec)) == MAX_SPEC_BYTES
    spec.write_bytes(spec.read_bytes() + b"\n")
    with pytest.raises(YamlRefused) as caught:
        read_text(spec)
    assert caught.value.problem.message.startswith("the file is 1.0 MiB: a job spec may be at most")


def test_a_pipe_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    written: list[int] = []

    def writer() -> None:
        # Far more than the limit: the reader stops early and the writer sees a broken pipe.
        chunk = b"# padding\n" * 6554
        try:
            for _ in range(100):
                written.append(os.write(write_end, chunk))
        except BrokenPipeError:
            pass
        finally:
            os.close(write_end)

    thread = threading.Thread(target=writer, daemon=True)  # never keeps pytest alive
    thread.start()
    try:
        with pytest.raises(YamlRefused) as caught:
            read_text(Path(f"/proc/self/fd/{read_end}"))
    finally:
        os.close(read_end)
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert caught.value.problem.message.startswith("the input is longer: a job spec may be")
    assert sum(written) < 100 * 65540  # the writer was cut off, not drained


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(YamlRefused, match="file not found"):
        read_text(tmp_path / "nope.yaml")
    with pytest.raises(YamlRefused, match="is a directory"):
        read_text(tmp_path)


# -- encoding --------------------------------------------------------------------------------


def test_utf8_with_or_without_a_byte_order_mark_is_text() -> None:
    assert decode("name: café\n".encode()) == "name: café\n"
    assert decode(codecs.BOM_UTF8 + "name: café\n".encode()) == "name: café\n"


def test_the_first_bad_byte_is_located_in_characters() -> None:
    # "é" is two bytes but one column; the bad byte comes after it on line 2.
    assert _refused("a: 1\nb: é".encode() + b"\xff\n") == (
        2,
        5,
        "not a UTF-8 text file: byte 0xFF cannot be decoded; save the spec as UTF-8",
    )
    assert _refused(b"a: caf\xe9\n")[:2] == (1, 7)  # Latin-1 text
    assert _refused(b"\x89PNG\r\n")[:2] == (1, 1)  # an image


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
    ],
)
def test_utf16_and_utf32_are_refused_with_a_fix(bom: bytes, encoding: str) -> None:
    text = "name: demo\n".encode(encoding.lower().replace("-", "_") + "_le")
    assert _refused(bom + text) == (
        1,
        1,
        f"not a UTF-8 text file: it starts with a {encoding} byte-order mark; save the spec as "
        "UTF-8",
    )


def test_control_characters_are_located() -> None:
    assert _refused(b"a: 1\nb: x\x00y\n") == (
        2,
        5,
        "not a UTF-8 text file: control character U+0000 (a binary file?)",
    )
    assert (
        _refused("a: \u0080\n".encode())[2] == "character U+0080 is not allowed in YAML; remove it"
    )
    assert decode(b"a:\tb\r\n") == "a:\tb\r\n"  # tab and CR LF are text


# -- tags ------------------------------------------------------------------------------------


def test_core_schema_tags_and_implicit_scalars() -> None:
    assert _value(
        "s: !!str 3\n"
        "i: !!int '7'\n"
        "f: !!float 1\n"
        "b: !!bool 'true'\n"
        "n: !!null ''\n"
        "m: !!map {a: 1}\n"
        "q: !!seq [1]\n"
        "ints: [0o17, 0x1F, 1_000, -3, +4, 017]\n"
        "floats: [1.5, 1e3, .inf, -.inf]\n"
        "other: [true, False, ~, null, '', 2024-01-01, 12:30, yes]\n"
        "plain: ! 12\n"
    ) == {
        "s": "3",
        "i": 7,
        "f": 1.0,
        "b": True,
        "n": None,
        "m": {"a": 1},
        "q": [1],
        "ints": [15, 31, 1000, -3, 4, 17],
        "floats": [1.5, 1000.0, float("inf"), float("-inf")],
        # A date is kept as written (it resolves to !!timestamp); 'yes' is a string in YAML 1.2.
        "other": [True, False, None, None, "", "2024-01-01", "12:30", "yes"],
        "plain": 12,
    }


def test_a_yaml_1_1_document_keeps_its_own_scalar_rules() -> None:
    assert _value("%YAML 1.1\n---\na: [yes, off, 017, 1:30, -1:30, 190:20:30.15, 0x1F]\n") == {
        "a": [True, False, 15, 90, -90, 685230.15, 31]
    }
    assert _value("a: [yes, 017, 1:30]\n") == {"a": ["yes", 17, "1:30"]}  # YAML 1.2, the default
    # ruamel warns of a YAML 1.1 float without a dot (an error under pytest); the value is right.
    assert _value("%YAML 1.1\n---\na: [1e3, 2E-1]\n") == {"a": [1000.0, 0.2]}


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("!!python/object/apply:os.system ['true']", "!!python/object/apply:os.system"),
        ("!!python/object/apply:os.system 'true'", "!!python/object/apply:os.system"),
        ("!!python/name:os.system", "!!python/name:os.system"),
        ("!!python/object/new:str {}", "!!python/object/new:str"),
        ("!!binary aGk=", "!!binary"),
        ("!!set {a: null}", "!!set"),
        ("!!omap [a: 1]", "!!omap"),
        ("!!pairs [a: 1]", "!!pairs"),
        ("!local 1", "!local"),
        ("!<tag:example.com,2000:x> 1", "!<tag:example.com,2000:x>"),
        ("!!str {a: 1}", "!!str"),  # a core tag on the wrong kind of node
        ("!!map [1]", "!!map"),
    ],
)
def test_every_other_tag_is_refused_at_its_position(written: str, shown: str) -> None:
    assert _problems(f"a: 1\nb: {written}\n") == [
        (
            2,
            4,
            ("b",),
            f"tag {shown} is not allowed; a job spec takes plain strings, numbers, booleans, "
            "lists and mappings",
        )
    ]


def test_a_tag_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "was-run"
    for text in (
        f"a: !!python/object/apply:os.system ['touch {marker}']\n",
        f"a: !!python/object/apply:os.system 'touch {marker}'\n",
        f"a: !!python/object/apply:pathlib.Path.touch [!!python/object/apply:pathlib.Path ['{marker}']]\n",
        f"a: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n",
    ):
        assert len(_problems(text)) == 1
        assert not marker.exists()


def test_a_value_that_does_not_fit_its_tag() -> None:
    assert _problems("a: !!int many\nb: !!float x\nc: !!bool maybe\nd: !!null 0\n") == [
        (1, 4, ("a",), "'many' is not a valid !!int"),
        (2, 4, ("b",), "'x' is not a valid !!float"),
        (3, 4, ("c",), "'maybe' is not a valid !!bool"),
        (4, 4, ("d",), "'0' is not a valid !!null"),
    ]


# -- anchors and aliases -----------------------------------------------------------------------


def test_aliases_and_merge_keys_work_as_yaml_says() -> None:
    value, problems, positions = _plain(
        "base: &base {nodes: 2, timeout: 10m}\n"
        "local: *base\n"
        "debug:\n"
        "  <<: *base\n"
        "  nodes: 1\n"
        "formal: {<<: [{nodes: 4}, *base]}\n"
    )
    assert problems == []
    assert value == {
        "base": {"nodes": 2, "timeout": "10m"},
        "local": {"nodes": 2, "timeout": "10m"},
        "debug": {"nodes": 1, "timeout": "10m"},  # the mapping's own key wins over a merged one
        "formal": {"nodes": 4, "timeout": "10m"},  # the first merged mapping wins
    }
    assert positions.find(("local",)) == ("spec.yaml", 2, 8)  # the alias, where it is written
    assert positions.find(("local", "nodes")) == ("spec.yaml", 1, 21)  # the anchored value
    assert positions.find(("debug", "nodes")) == ("spec.yaml", 5, 10)
    assert positions.find(("debug", "timeout")) == ("spec.yaml", 1, 33)


def _billion_laughs(levels: int, width: int) -> str:
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_stops_at_the_limit_with_bounded_memory() -> None:
    text = _billion_laughs(9, 9)  # 9**9 (387 million) strings if expanded
    tracemalloc.start()
    try:
        problems = _problems(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert problems == [
        (
            6,
            10,
            ("l5", 0),
            f"aliases expand to more than {MAX_ALIAS_NODES} values (an alias bomb?); write the "
            "values out",
        )
    ]
    assert peak < 32 * 2**20  # a few MiB: the expansion stopped long before it grew


def test_a_bomb_of_merge_keys_stops_too() -> None:
    lines = ["m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}"]
    for level in range(1, 9):
        merged = ", ".join(f"*m{level - 1}" for _ in range(9))
        lines.append(f"m{level}: &m{level} {{<<: [{merged}], own: {level}}}")
    lines.append("top: {<<: *m8}")
    problems = _problems("\n".join(lines) + "\n")
    assert len(problems) == 1
    assert "aliases expand to more than" in problems[0][3]


def test_the_number_of_aliases_is_limited() -> None:
    ok = "a: &a 1\n" + "".join(f"k{i}: *a\n" for i in range(MAX_ALIASES))
    assert _problems(ok) == []
    assert _problems(ok + "last: *a\n") == [
        (
            MAX_ALIASES + 2,
            7,
            ("last",),
            f"more than {MAX_ALIASES} aliases; a job spec needs far fewer: write the values out",
        )
    ]


@pytest.mark.parametrize(
    ("text", "at", "loc"),
    [
        ("a: &a [1, *a]\n", (1, 11), ("a", 1)),
        ("a: &a {k: {j: *a}}\n", (1, 15), ("a", "k", "j")),
        ("a: &a {<<: *a}\n", (1, 12), ("a",)),
        ("a: &a [{<<: [*a]}]\n", (1, 14), ("a", 0)),
    ],
)
def test_a_recursive_structure_is_refused(
    text: str, at: tuple[int, int], loc: tuple[str | int, ...]
) -> None:
    assert _problems(text) == [
        (*at, loc, "alias *a is inside its own anchor &a: a job spec cannot be recursive")
    ]


def test_nesting_is_limited() -> None:
    assert _value("a: " + "[" * 60 + "]" * 60 + "\n") is not None
    deep_through_aliases = (
        "a: &a " + "[" * 40 + "1" + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30
    )
    assert _problems(deep_through_aliases + "\n")[0][3] == "nested more than 64 levels deep"


# -- keys and positions ------------------------------------------------------------------------


def test_duplicate_keys_are_named_at_the_second() -> None:
    assert _problems("a: 1\nb:\n  c: 1\n  c: 2\n") == [
        (4, 3, ("b", "c"), "key 'c' is written twice (first at line 3); keep one")
    ]


def test_a_key_must_be_a_single_value() -> None:
    assert _problems("? [a, b]\n: 1\n") == [
        (1, 3, (), "a key must be a single value, not a list or a mapping")
    ]


def test_an_empty_value_is_placed_on_its_own_line() -> None:
    value, problems, positions = _plain(
        "hyper:\n  lr:\n  epochs: 2\n  seed: # later\n\n  arch: x\nitems:\n  -\n  - 1\n"
    )
    assert problems == []
    assert value == {
        "hyper": {"lr": None, "epochs": 2, "seed": None, "arch": "x"},
        "items": [None, 1],
    }
    assert positions.find(("hyper", "lr")) == ("spec.yaml", 2, 5)  # at its ':', not line 3
    assert positions.find(("hyper", "seed")) == ("spec.yaml", 4, 7)  # the comment is skipped
    assert positions.find(("items", 0)) == ("spec.yaml", 8, 3)  # at its '-'


def test_an_anchor_may_be_defined_again() -> None:
    # Legal YAML; ruamel would warn (an error under pytest's filterwarnings).
    assert _value("a: &x 1\nb: &x 2\nc: *x\n") == {"a": 1, "b": 2, "c": 2}


def test_the_number_of_values_is_limited_while_composing() -> None:
    items = "".join(f"- {i}\n" for i in range(MAX_VALUES - 3))
    assert len(_value("x:\n" + items)["x"]) == MAX_VALUES - 3  # with the root, x and the list
    with pytest.raises(YamlRefused) as caught:
        compose("x:\n" + items + "- last\n")
    assert caught.value.problem == YamlProblem(
        MAX_VALUES - 1, 3, f"more than {MAX_VALUES} keys and values; a job spec has far fewer"
    )


def test_merge_aliases_count_as_aliases() -> None:
    ok = "a: &a {x: 1}\n" + "".join(f"k{i}: {{<<: *a}}\n" for i in range(MAX_ALIASES))
    assert _problems(ok) == []
    assert _problems(ok + "last: {<<: *a}\n")[0][:3] == (MAX_ALIASES + 2, 12, ("last",))
