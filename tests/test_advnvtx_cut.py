"""`tracelens nvtx` against the real `nsys stats` 2022.4 on a capture cut out of a running
program, as a long job is profiled (a dev check that skips without nsys, as
test_advnvtx_threads.py, whose helpers it uses): `nsys profile --delay=1 --duration=1` of a
program that runs until it is killed, its main thread and a worker inside ranges that began
before the window and never end. nsys's export leaves out the ranges that began before the
window and ends those still open at its end with the session; every report equals nsys's
row for row.
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
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *worker(void *arg) {
  (void)arg;
  nvtxRangePushA("thread whole");
  for (int i = 0;; i++) {
    char n[8]; snprintf(n, sizeof n, "t%d", i % 3);
    nvtxRangePushA(n); usleep(30000); nvtxRangePop();
  }
  return NULL;
}

int main(void) {
  nvtxDomainHandle_t dom = nvtxDomainCreateA("early");  /* before the window */
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "in early domain";
  nvtxRangePushA("whole run");
  nvtxRangeStartA("se whole");
  pthread_t t; pthread_create(&t, NULL, worker, NULL);
  for (;;) {  /* until nsys ends the collection and kills it */
    nvtxRangePushA("step");
    nvtxRangeId_t r = nvtxRangeStartA("se step");
    nvtxRangePushA("inner"); usleep(20000); nvtxRangePop();
    nvtxDomainRangePushEx(dom, &a); usleep(1000); nvtxDomainRangePop(dom);
    usleep(20000);
    nvtxRangeEnd(r);
    nvtxRangePop();
  }
}
"""


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory):
    build = tmp_path_factory.mktemp("advnvtx_cut")
    (build / "prog.c").write_text(PROGRAM, encoding="utf-8")
    prog = build / "prog"
    subprocess.run(
        [CC, "-O1", f"-I{NVTX_INCLUDE}", str(build / "prog.c"), "-o", str(prog), "-ldl",
         "-lpthread"],
        check=True,
    )  # fmt: skip
    profile = [NSYS, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw=none", "--delay=1"]
    # not check=True: nsys exits 0 or passes on the SIGTERM it ended the program with (143)
    done = subprocess.run(
        [*profile, "--duration=1", "-f", "true", "-o", str(build / "run"), str(prog)],
        capture_output=True, timeout=600,
    )  # fmt: skip
    assert (build / "run.qdstrm").is_file() or (build / "run.nsys-rep").is_file(), done.stderr
    rep = imported(build)
    return export(rep)


@pytest.mark.parametrize("report", sorted(REPORTS))
def test_a_cut_capture_equals_nsys_stats_row_for_row(sqlite, report, capsys):
    assert_same(tracelens_rows(capsys, sqlite, report, "--no-cache"), nsys_rows(sqlite, report))


def test_the_window_holds_only_the_ranges_that_began_in_it(sqlite, capsys):
    rows = tracelens_rows(capsys, sqlite, "nvtxsum", "--no-cache")
    assert sorted((r[-1], r[-2]) for r in rows) == [
        ("early:in early domain", "PushPop"), ("inner", "PushPop"), ("se step", "StartEnd"), ("step", "PushPop"),
        ("t0", "PushPop"), ("t1", "PushPop"), ("t2", "PushPop"),
    ]  # fmt: skip
    steps = {r[-1]: int(r[2]) for r in rows}
    # about 25 steps of 40 ms in the second; 'inner' of the last may be cut off at its end
    assert 10 <= steps["step"] == steps["se step"] <= 30
