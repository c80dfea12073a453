"""The built-in ignore rules, matched without pathspec, say what pathspec says of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pathspec
from hypothesis import given
from hypothesis import strategies as st

from majob.storage import ignore

SEGMENTS = st.sampled_from(
    [
        *(p.rstrip("/") for p in ignore.DEFAULT_IGNORES),
        "a",
        "src",
        "x.pyc",
        "x.py",
        "pyc",
        ".git.bak",
        "my.venv",
        "__pycache__x",
        ".DS_Store.txt",
        ".GIT",
    ]
)


@given(st.lists(SEGMENTS, min_size=1, max_size=4), st.booleans())
def test_the_built_in_rules_match_as_pathspec_matches_them(
    segments: list[str], folder: bool
) -> None:
    reference = pathspec.PathSpec.from_lines("gitignore", ignore.DEFAULT_IGNORES)
    path = "/".join(segments) + ("/" if folder else "")
    assert ignore._DEFAULTS.check_file(path).include == reference.check_file(path).include, path


def test_a_tree_without_ignore_files_is_walked_without_pathspec(tmp_path: Path) -> None:
    for name in ("train.py", "pkg/model.py", ".git/config", "pkg/__pycache__/m.pyc", ".env"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    probe = (
        "import sys; from pathlib import Path; from majob.storage.ignore import walk_files; "
        f"print(sorted(walk_files(Path({str(tmp_path)!r})))); print('pathspec' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["['pkg/model.py', 'train.py']", "False"]
    (tmp_path / "pkg" / ".gitignore").write_text("model.py\n")  # rules of its own: pathspec
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["['pkg/.gitignore', 'train.py']", "True"]
