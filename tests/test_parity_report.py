"""The report of a damaged export through the cache is the report of a direct read.

A GPU record that ends before it starts (a damaged export) is left out of every figure
(test_damaged_records). The report's stakeout reads its top kernels' launches in one of
three ways: on an export read directly, from the work the page read and SQLite
(report/stakeoutread.py, which leaves them out); of a cached trace, with at most
HELD_LAUNCHES launches, from one read of them (queries/stakeout_profiles.sql), which did
not: the gemm's spread counted 6 launches (the cut-off one, end 0, with a duration of
minus its start) where the direct read's page counts 5, and its cv was -2.45, not 0.00.
Found by the parity sweep on test_damaged_records' trace (first cached run and repeat).
Its launch configurations kept the damaged launches both ways (SQLite's aggregate of the
export, queries/report_stakeout_configs_export.sql, too): 6 launches, -1,000.0 s in total,
where `tracelens stakeout` (filtered_kernels) counts 5.
Each test has its own cache directory (conftest); ``cache_dir`` caches the small trace."""

from __future__ import annotations

from conftest import run_cli
from test_damaged_records import GEMM, _build


def _page(args, capsys, page) -> str:
    code, _out, err = run_cli([*args, "-o", page], capsys)
    assert code == 0, err
    return page.read_text(encoding="utf-8")


def test_the_stakeout_of_a_damaged_export_leaves_its_damaged_launches_out(
    tmp_path, cache_dir, capsys
):
    path = _build(tmp_path / "damaged.sqlite")
    page = tmp_path / "page.html"
    direct = _page(["report", path, "--no-cache"], capsys, page)
    # the gemm's spread: 5 launches of 300 us (the 6th is damaged), cv 0.00
    row = (
        '<td class="num">5</td><td class="num">300.0 µs</td><td class="num">300.0 µs</td>'
        '<td class="num">300.0 µs</td><td class="num">300.0 µs</td><td class="num">0.00</td>'
    )
    assert GEMM in direct and row in direct
    # its launch configuration: 5 launches, 1.5 ms (the old code, both ways: 6, -1,000.0 s)
    assert 'title="5 launches, 1.50 ms in total"' in direct
    assert _page(["report", path], capsys, page) == direct  # first run through the cache
    assert _page(["report", path], capsys, page) == direct  # repeat: the kept page
