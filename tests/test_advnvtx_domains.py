"""`tracelens nvtx` against the real `nsys stats` 2022.4 on NVTX domains (a dev check that
skips without nsys, as test_advnvtx_threads.py, whose capture and CSV helpers it uses):
named domains with registered strings, categories, colors and payloads; a range with no
message in a domain and out of one (both a NULL name, one row, as in nsys); the same label
in a named and the default domain; a registered string of the default domain and the same
free text (one row); a wide registered string and a wide message; a domain and label that
join to the name of another ('a:b' + 'c', 'a' + 'b:c': one row); a NULL domain handle;
marks; a domain destroyed and another created after it; worker threads pushing ranges in a
domain main created. Every report equals nsys's row for row.

One program, two captures: with an argument, each worker thread creates the domain 'io'
itself (NVTX gives each the same handle, and nsys records one domain-create event per
thread). There nsys 2022.4 counts every 'io' range once per creating thread: its report
joins ranges to the domain names grouped by (domainId, thread) on the process alone. That
is nsys's double counting, not a name; tracelens names the range once (the earliest
create event of the domain in the process) and counts it once, so that row and every Time
(%) differ from nsys's, and the test pins exactly how.
"""

from __future__ import annotations

import subprocess

import pytest
from fixtures.nsys_live import NSYS, imported, needs_nsys
from test_advnvtx_threads import (
    REPORTS,
    assert_same,
    capture,
    export,
    nsys_rows,
    tracelens_rows,
)

pytestmark = needs_nsys()

PROGRAM = r"""
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <time.h>

static void spin(long ns) {
  struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do { clock_gettime(CLOCK_MONOTONIC, &b); }
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static nvtxEventAttributes_t attr(void) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

static nvtxDomainHandle_t shared_io;
static int per_thread;

static void *worker(void *arg) {
  long t = (long)arg;
  nvtxDomainHandle_t dom = per_thread ? nvtxDomainCreateA("io") : shared_io;
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "read batch");
  for (int i = 0; i < 10; i++) {
    nvtxEventAttributes_t a = attr();
    a.colorType = NVTX_COLOR_ARGB; a.color = 0xFF0000FF;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64; a.payload.llValue = i;
    a.category = 3;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED; a.message.registered = reg;
    nvtxDomainRangePushEx(dom, &a);
    spin(3000 + 400 * t + 50 * i);
    nvtxDomainRangePop(dom);
  }
  return NULL;
}

int main(int argc, char **argv) {
  per_thread = argc > 1;
  if (!per_thread) shared_io = nvtxDomainCreateA("io");
  nvtxNameCategoryA(3, "loader");
  nvtxDomainHandle_t model = nvtxDomainCreateA("model");
  nvtxDomainNameCategoryA(model, 1, "layers");
  nvtxStringHandle_t fwd = nvtxDomainRegisterStringA(model, "forward");
  nvtxStringHandle_t plain = nvtxDomainRegisterStringA(NULL, "registered default");
  for (int i = 0; i < 6; i++) {
    nvtxEventAttributes_t a = attr();
    a.category = 1;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED; a.message.registered = fwd;
    nvtxDomainRangePushEx(model, &a);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "layer";
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE; a.payload.dValue = 0.5 * i;
    nvtxDomainRangePushEx(model, &a); spin(2000 + 100 * i); nvtxDomainRangePop(model);
    nvtxDomainMarkEx(model, &a);
    nvtxDomainRangePop(model);
    a = attr();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED; a.message.registered = plain;
    nvtxRangePushEx(&a); spin(1500); nvtxRangePop();
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE; a.message.unicode = L"model wide ✓";
    nvtxRangeId_t r = nvtxDomainRangeStartEx(model, &a); spin(1700 + 10 * i);
    nvtxDomainRangeEnd(model, r);
    nvtxRangePushA("layer"); spin(900); nvtxRangePop();  /* the default domain's 'layer' */
  }
  { nvtxEventAttributes_t a = attr(); nvtxDomainRangePushEx(model, &a); spin(1000);
    nvtxDomainRangePop(model);  /* no message: no name, in a domain or not */
    nvtxRangePushEx(&a); spin(1100); nvtxRangePop(); }
  nvtxRangePushA("registered default"); spin(1400); nvtxRangePop();  /* free text alike */
  { nvtxEventAttributes_t a = attr(); a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringW(model, L"wide registered ✓");
    nvtxDomainRangePushEx(model, &a); spin(1600); nvtxDomainRangePop(model); }
  pthread_t th[3];
  for (long t = 0; t < 3; t++) pthread_create(&th[t], NULL, worker, (void *)t);
  for (int t = 0; t < 3; t++) pthread_join(th[t], NULL);
  /* 'a:b' + 'c' and 'a' + 'b:c' are one name, 'a:b:c'; a NULL handle is the default domain */
  nvtxDomainHandle_t ab = nvtxDomainCreateA("a:b"), a_ = nvtxDomainCreateA("a");
  { nvtxEventAttributes_t a = attr(); a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "c"; nvtxDomainRangePushEx(ab, &a); spin(2100); nvtxDomainRangePop(ab);
    a.message.ascii = "b:c"; nvtxDomainRangePushEx(a_, &a); spin(2200); nvtxDomainRangePop(a_);
    a.message.ascii = "null handle"; nvtxDomainRangePushEx(NULL, &a); spin(2300);
    nvtxDomainRangePop(NULL); }
  nvtxMarkA("done");
  nvtxDomainDestroy(model);
  model = nvtxDomainCreateA("model again");
  { nvtxEventAttributes_t a = attr(); a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "after destroy";
    nvtxDomainRangePushEx(model, &a); spin(1300); nvtxDomainRangePop(model); }
  return 0;
}
"""

NAMES = {  # name -> (instances, style), in both captures
    "io:read batch": (30, "PushPop"),
    "model:forward": (6, "PushPop"),
    "model:layer": (6, "PushPop"),
    "layer": (6, "PushPop"),
    "registered default": (7, "PushPop"),
    "model:model wide \u2713": (6, "StartEnd"),
    "model:wide registered \u2713": (1, "PushPop"),
    "": (2, "PushPop"),
    "model again:after destroy": (1, "PushPop"),
    "a:b:c": (2, "PushPop"),
    "null handle": (1, "PushPop"),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, object]:
    """{'once': export where main creates every domain, 'per_thread': where each worker
    creates 'io' itself}."""
    build = tmp_path_factory.mktemp("advnvtx_domains")
    once = export(capture(PROGRAM, build))
    prog = build / "prog"
    profile = [NSYS, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw=none", "-f", "true"]
    threads = tmp_path_factory.mktemp("advnvtx_domain_threads")
    subprocess.run(
        [*profile, "-o", str(threads / "run"), str(prog), "per-thread"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    rep = imported(threads)
    return {"once": once, "per_thread": export(rep)}


@pytest.mark.parametrize("report", sorted(REPORTS))
def test_domains_equal_nsys_stats_row_for_row(exports, report, capsys):
    sqlite = exports["once"]
    ours = tracelens_rows(capsys, sqlite, report, "--no-cache")
    assert_same(ours, nsys_rows(sqlite, report))


def test_domain_names_and_counts(exports, capsys):
    for which in ("once", "per_thread"):
        rows = tracelens_rows(capsys, exports[which], "nvtxsum", "--no-cache")
        assert {r[-1]: (int(r[2]), r[-2]) for r in rows} == NAMES


def test_a_domain_created_on_every_thread_is_counted_once_where_nsys_counts_it_thrice(
    exports, capsys
):
    sqlite = exports["per_thread"]
    ours = {r[-1]: r for r in tracelens_rows(capsys, sqlite, "nvtxsum", "--no-cache")}
    theirs = {r[-1]: r for r in nsys_rows(sqlite, "nvtxsum")}
    assert ours.keys() == theirs.keys()
    io_ours, io_theirs = ours.pop("io:read batch"), theirs.pop("io:read batch")
    # nsys: each of the 30 ranges three times, once per thread's create event of 'io'
    assert (int(io_theirs[1]), int(io_theirs[2])) == (3 * int(io_ours[1]), 90)
    assert io_theirs[3:7] == io_ours[3:7]  # Avg, Med, Min, Max: the same ranges, thrice
    assert io_theirs[7] != io_ours[7]  # StdDev of 90 values, not 30
    # every other row alike but its Time (%), of nsys's total with 'io' thrice
    for name, row in ours.items():
        assert row[1:] == theirs[name][1:]
    total = sum(int(r[1]) for r in [io_ours, *ours.values()])
    assert abs(float(io_ours[0]) - 100 * int(io_ours[1]) / total) <= 0.05  # of our total
