"""`tracelens nvtx` against the real `nsys stats` 2022.4 on a capture of several processes
(a dev check that skips without nsys, as test_advnvtx_threads.py, whose helpers it uses):
`nsys profile sh -c '...'` runs one program three times, each process creating its own
domains in its own order, so the same domain id names a different domain in each process
('alpha' is id 1 of one and id 2 of another) and a label is pushed in each. nsys names a
range from its own process's domains (ranges join domain names on the pid bits of
globalTid), as tracelens does; every report equals nsys's row for row.
"""

from __future__ import annotations

import subprocess

import pytest
from fixtures.nsys_live import CC, NSYS, NVTX_INCLUDE, imported, needs_nsys
from test_advnvtx_threads import (
    REPORTS,
    assert_same,
    export,
    nsys_rows,
    tracelens_rows,
)

pytestmark = needs_nsys()

PROGRAM = r"""
#include <nvtx3/nvToolsExt.h>
#include <time.h>

static void spin(long ns) {
  struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do { clock_gettime(CLOCK_MONOTONIC, &b); }
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* argv[1..]: the domains to create, in order; each process pushes 'work' in every one */
int main(int argc, char **argv) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "work";
  for (int i = 1; i < argc; i++) {
    nvtxDomainHandle_t d = nvtxDomainCreateA(argv[i]);
    for (int j = 0; j < 4; j++) {
      nvtxDomainRangePushEx(d, &a); spin(1000 * i + 300 * j); nvtxDomainRangePop(d);
    }
  }
  nvtxRangePushA("work"); spin(1500); nvtxRangePop();
  return 0;
}
"""


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory):
    build = tmp_path_factory.mktemp("advnvtx_processes")
    (build / "prog.c").write_text(PROGRAM, encoding="utf-8")
    prog = build / "prog"
    subprocess.run([CC, "-O1", f"-I{NVTX_INCLUDE}", str(prog) + ".c", "-o", str(prog), "-ldl"],
                   check=True)  # fmt: skip
    script = f"{prog} alpha beta; {prog} beta alpha; {prog} gamma"
    profile = [NSYS, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw=none", "-f", "true"]
    subprocess.run(
        [*profile, "-o", str(build / "run"), "sh", "-c", script],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    rep = imported(build)
    return export(rep)


@pytest.mark.parametrize("report", sorted(REPORTS))
def test_processes_equal_nsys_stats_row_for_row(sqlite, report, capsys):
    assert_same(tracelens_rows(capsys, sqlite, report, "--no-cache"), nsys_rows(sqlite, report))


def test_each_range_is_named_from_its_own_process(sqlite, capsys):
    rows = tracelens_rows(capsys, sqlite, "nvtxsum", "--no-cache")
    assert sorted((r[-1], int(r[2])) for r in rows) == [
        ("alpha:work", 8), ("beta:work", 8), ("gamma:work", 4), ("work", 3),
    ]  # fmt: skip
