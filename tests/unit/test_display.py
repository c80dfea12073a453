"""``majob.display``: values hand their views to it; ``majob.notebook`` registers what draws them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from majob import display


def test_a_value_nothing_draws_has_no_html_and_says_which_view_is_missing() -> None:
    class Plain:
        pass

    assert display.html(Plain()) is None  # Jupyter then shows its repr
    with pytest.raises(LookupError, match="no metrics view is registered for Plain"):
        display.metrics(Plain())


def test_a_subclass_is_drawn_as_the_class_it_extends() -> None:
    class Base:
        pass

    class Derived(Base):
        pass

    display.register(Base, html=lambda value: f"<b>{type(value).__name__}</b>")
    assert display.html(Derived()) == "<b>Derived</b>"


def test_the_notebook_is_imported_by_the_first_view_not_by_import_majob(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from majob.service.base import Job\n"
        "job = Job(id='1234', name='tiny-debug', phase='Completed')\n"
        "assert 'majob.notebook' not in sys.modules\n"
        "html = job._repr_html_()\n"
        "assert 'majob.notebook' in sys.modules and 'tiny-debug (1234)' in html, html\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
