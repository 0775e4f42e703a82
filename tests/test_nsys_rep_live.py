"""A real `.nsys-rep`, end to end, with the real nsys 2022.4 (a dev check: CI has no nsys,
so it skips there with the reason): a small C program with NVTX push/pop and start/end
ranges is profiled with `nsys profile -t nvtx`, its capture imported with QdstrmImporter
(nsys 2022.4 from Debian cannot find its importer by itself, ../shared/nsys/INSTALL.md),
and tracelens is handed the `.nsys-rep`: it exports it with nsys into the cache directory,
never beside the report, and its NVTX summary equals `nsys stats --report nvtxsum` of
that export row for row."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, sha256
from fixtures.nsys_live import CC, NSYS, NVTX_INCLUDE, imported, needs_nsys

pytestmark = needs_nsys()

PROGRAM = r"""
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>
int main(void) {
  for (int step = 0; step < 4; step++) {
    nvtxRangePushA("train_step");
    nvtxRangePushA("forward");  usleep(2000); nvtxRangePop();
    nvtxRangePushA("backward"); usleep(3000); nvtxRangePop();
    nvtxRangePop();
  }
  nvtxRangeId_t r = nvtxRangeStartA("shutdown");
  usleep(1000);
  nvtxRangeEnd(r);
  return 0;
}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A real .nsys-rep of the program above, alone in its directory."""
    build = tmp_path_factory.mktemp("nsys_build")
    (build / "prog.c").write_text(PROGRAM)
    prog = build / "prog"
    subprocess.run(
        [CC, "-O1", f"-I{NVTX_INCLUDE}", str(build / "prog.c"), "-o", str(prog), "-ldl"],
        check=True,
    )
    profile = [NSYS, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw=none"]
    subprocess.run(
        [*profile, "-f", "true", "-o", str(build / "run"), str(prog)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    rep = imported(build)
    alone = tmp_path_factory.mktemp("nsys_report") / "run.nsys-rep"
    shutil.copy(rep, alone)
    return alone


def _nsys_stats(export: Path, name: str) -> list[list[str]]:
    out = subprocess.run(
        [NSYS, "stats", "--report", name, "--format", "csv", "-o", "-", str(export)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    lines = [x for x in out.splitlines() if x and not x.startswith("Processing [")]
    return list(csv.reader(io.StringIO("\n".join(lines))))[1:]


def test_a_real_report_is_exported_into_the_cache_and_matches_nsys(
    report, tmp_path, monkeypatch, capsys
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(cache))
    before = sha256(report)
    rc, out, err = run_cli(["nvtx", report, "--format", "csv"], capsys)
    assert rc == 0, err
    assert err.startswith("tracelens: exporting run.nsys-rep to SQLite with nsys into ")
    rows = list(csv.reader(io.StringIO(out)))[1:]
    # (by total time, as nsys sorts: the order of the sleeps can flip on a loaded machine)
    assert sorted((r[-1], r[2], r[-2]) for r in rows) == [
        ("backward", "4", "PushPop"),
        ("forward", "4", "PushPop"),
        ("shutdown", "1", "StartEnd"),
        ("train_step", "4", "PushPop"),
    ]
    exports = list(cache.rglob("export.sqlite"))
    assert len(exports) == 1
    assert rows == _nsys_stats(exports[0], "nvtxsum")
    # The report is untouched and alone; a second command reads the export it made.
    assert os.listdir(report.parent) == ["run.nsys-rep"] and sha256(report) == before
    rc, out, err = run_cli(["census", report], capsys)
    assert (rc, out) == (3, "")
    assert err == f"tracelens: {report}: no CUDA kernel data: was it captured with -t cuda?\n"
