"""api --osrt against the real nsys 2022.4 on a capture of its own (a dev check: CI has no
nsys, so it skips there with the reason): a small C program that polls, sleeps, waits on
a condition variable and a semaphore and reads a pipe is profiled with
`nsys profile -t osrt,nvtx`, its capture imported with QdstrmImporter when nsys could not
run it itself (../shared/nsys/INSTALL.md), exported to SQLite with `nsys export`, and
`tracelens api --osrt --format csv` equals `nsys stats --report osrtsum --format csv` of
that export row for row (in nsys's order: by total time; nsys leaves the order of equal
totals open, tracelens orders them by name)."""

from __future__ import annotations

import csv
import io
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from fixtures.nsys_live import CC, NSYS, imported, needs_nsys

pytestmark = needs_nsys(nvtx_headers=False)

PROGRAM = r"""
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int ready = 0;
static int pipe_fds[2];
static void *loader(void *arg) {
  (void)arg;
  usleep(100000);
  pthread_mutex_lock(&lock); ready = 1; pthread_cond_signal(&done);
  pthread_mutex_unlock(&lock);
  usleep(100000);
  char byte = 'x';
  write(pipe_fds[1], &byte, 1);
  return NULL;
}
int main(void) {
  pipe(pipe_fds);
  pthread_t thread;
  pthread_create(&thread, NULL, loader, NULL);
  pthread_mutex_lock(&lock);
  while (!ready) pthread_cond_wait(&done, &lock);
  pthread_mutex_unlock(&lock);
  char byte;
  read(pipe_fds[0], &byte, 1);
  pthread_join(thread, NULL);
  for (int i = 0; i < 5; i++) poll(NULL, 0, 3 + i);
  for (int i = 0; i < 3; i++) usleep(2000 + 1000 * i);
  sem_t sem;
  sem_init(&sem, 0, 0);
  for (int i = 0; i < 2; i++) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 2000000;
    if (until.tv_nsec >= 1000000000) { until.tv_sec += 1; until.tv_nsec -= 1000000000; }
    sem_timedwait(&sem, &until);
  }
  return 0;
}
"""


def _run(args: list, timeout: int = 120) -> str:
    done = subprocess.run(
        [str(a) for a in args], check=True, capture_output=True, text=True, timeout=timeout
    )
    return done.stdout


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    """The SQLite export of one nsys capture of the program above."""
    build = tmp_path_factory.mktemp("osrt_live")
    (build / "prog.c").write_text(PROGRAM)
    _run([CC, "-O1", build / "prog.c", "-o", build / "prog", "-lpthread"])
    _run([NSYS, "profile", "-t", "osrt,nvtx", "-s", "none", "--cpuctxsw=none", "-f", "true",
          "-o", build / "run", build / "prog"])  # fmt: skip
    imported(build)  # the importer step, where nsys could not run it itself
    _run([NSYS, "export", "--type", "sqlite", "-f", "true", "-o", build / "run.sqlite",
          build / "run.nsys-rep"])  # fmt: skip
    return build / "run.sqlite"


def _nsys_osrtsum(path: Path) -> list[list[str]]:
    out = _run([NSYS, "stats", "--report", "osrtsum", "--format", "csv", "-o", "-", path])
    lines = [x for x in out.splitlines() if x and not x.startswith("Processing [")]
    return list(csv.reader(io.StringIO("\n".join(lines))))[1:]


def test_api_osrt_equals_nsys_stats_osrtsum_row_for_row(export, capsys):
    rc, out, err = run_cli(["api", export, "--osrt", "--format", "csv", "--no-cache"], capsys)
    assert (rc, err) == (0, "")
    ours = list(csv.reader(io.StringIO(out)))[1:]
    theirs = _nsys_osrtsum(export)
    # nsys's order, its ties (equal totals, ns apart from never) by name as tracelens's
    assert ours == sorted(theirs, key=lambda r: (-int(r[1]), r[-1]))
    # the calls that block for milliseconds (nsys leaves out those under its 1 us
    # --osrt-threshold: pthread_join, a write, can be that short)
    calls = {r[-1]: int(r[2]) for r in ours}
    blocking = ("poll", "usleep", "sem_timedwait", "read")
    assert [calls.get(name) for name in blocking] == [5, 5, 2, 1]
    assert calls.get("pthread_cond_wait", 0) >= 1  # a spurious wakeup waits twice
