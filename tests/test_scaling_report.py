"""``python -m scaling all`` and ``report`` rewrite only the measured blocks of ``docs/performance.md``.

The page is mostly written by hand (sections on the lane, loops, threads,
npbench...); the report replaces what lies between its ``report`` markers and
keeps the rest.  Not collective: serial only.
"""

from pathlib import Path

import pytest

report = pytest.importorskip("scaling.report")  # (the checkout's scaling suite, not in the wheel)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


def _render(page=None, notes=("note one",)):
    return report.render([], [], [], DOCS.parent, list(notes), page=page)


def test_a_fresh_page_holds_every_block():
    page = _render()
    for name in report.BLOCKS:
        assert page.count(f"<!-- report:{name} -->") == 1 and page.count(f"<!-- /report:{name} -->") == 1, name
    assert "- note one" in page


def test_hand_written_text_survives_and_blocks_are_replaced():
    page = _render().replace("## Memory\n", "## Memory\n\nA HAND-WRITTEN PARAGRAPH.\n", 1)
    again = _render(page, notes=("note two",))
    assert "A HAND-WRITTEN PARAGRAPH." in again
    assert "- note two" in again and "- note one" not in again
    assert again == _render(again, notes=("note two",))  # (idempotent)


def test_the_published_page_keeps_its_sections():
    if not DOCS.exists():
        pytest.skip("docs/performance.md is not beside the tests (an installed wheel)")
    page = DOCS.read_text()
    again = _render(page)
    headings = [line for line in page.splitlines() if line.startswith("#")]
    assert headings == [line for line in again.splitlines() if line.startswith("#")]
    assert "## Whole programs" in again and "### Loop statements" in again
    outside = page.split("<!-- /report:peers -->", 1)[1].split("## Reproducing", 1)[0]
    assert outside in again  # (the GPU section, written by hand)
    from scaling import fusion

    if not (fusion.RESULTS / "fusion.json").exists():  # (no fusion run here: its block is kept)
        block = page.split(fusion.BEGIN, 1)[1].split(fusion.END, 1)[0]
        assert fusion.BEGIN + block + fusion.END in again
