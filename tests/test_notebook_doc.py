"""docs/notebook.md runs as written: every ```pycon block is a doctest, the blocks share one
namespace in order, and each shown output must be exactly what the code prints."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"
README = DOC.parents[1] / "README.md"
BLOCK = re.compile(r"^```pycon\n(.*?)^```$", re.M | re.S)


def _blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_walk_through_has_blocks_and_the_readme_links_it():
    assert len(_blocks()) >= 8
    assert "](docs/notebook.md)" in README.read_text(encoding="utf-8")
    # nothing outside a pycon block looks like an example that would not be run
    outside = BLOCK.sub("", DOC.read_text(encoding="utf-8"))
    assert ">>> " not in outside


def test_every_block_prints_what_it_shows():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs: dict = {}
    failures = []
    for i, block in enumerate(_blocks(), start=1):
        test = parser.get_doctest(block, globs, f"notebook.md block {i}", str(DOC), 0)
        assert test.examples, f"block {i} has no example"
        result = runner.run(test, out=failures.append, clear_globs=False)
        globs = test.globs
        if result.failed:
            break
    trace = globs.get("trace")
    if trace is not None and not trace.closed:
        trace.close()
    if failures:
        pytest.fail("".join(failures), pytrace=False)
