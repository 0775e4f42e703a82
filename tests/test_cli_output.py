"""The output layer and the command line's manners: --version, choices refused by the parser,
neutral library errors, time digits, control characters, CSV formulas, atomic -o, Ctrl-C."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from conftest import run_cli

import tracelens
from tracelens.errors import UsageError

synth = pytest.importorskip("tracelens.synth")


def _trace(
    tmp_path: Path, *, name: str = "vectorAdd", process: str = "python x.py", start: int = 3_000
) -> Path:
    b = synth.TraceBuilder("3.23.3")  # a schema with TARGET_INFO_GPU
    b.process(7, process)
    b.gpu(0, "NVIDIA H100 80GB HBM3", cuda_device=1)
    b.gpu(1, "NVIDIA H100 80GB HBM3", cuda_device=0, bus_location="0000:19:00.0")
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=7)
    b.kernel(name, start=start, end=start + 1_234, correlation_id=c, pid=7)
    return b.write(tmp_path / "t.sqlite")


def test_version(capsys):
    assert run_cli(["--version"], capsys) == (0, f"tracelens {tracelens.__version__}\n", "")


@pytest.mark.parametrize(
    "args, message",
    [
        (["census", "-f", "xml"], "unknown --format 'xml'; use one of: table, csv, json, markdown"),
        (["info", "-f", "csv"], "unknown --format 'csv'; use one of: table, json, markdown"),
        (["census", "--timeunit", "min"], "unknown --timeunit 'min'; use one of: ns, us, ms, s"),
        (["census", "--top", "-1"], "--top must be 0 (every row) or more (got -1)"),
        (["census", "--top", "x"], "--top 'x' is not a whole number"),
        (["timeline", "--limit", "-1"], "--limit must be 0 (every row) or more (got -1)"),
        (["timeline", "--gap", "soon"], "--gap 'soon' is not a time; use a number with an"),
        (["census", "--start", "2ms", "--end", "1ms"], "--end (1000000 ns) is before --start"),
    ],
)
def test_the_parser_refuses_bad_values_before_opening_the_trace(args, message, capsys):
    # The trace does not exist: the option is refused first, in one line, exit 2.
    rc, out, err = run_cli([*args, "/nonexistent.sqlite"], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {message}") and err.count("\n") == 1


def test_help_lists_the_choices_of_that_command(capsys):
    _, out, _ = run_cli(["info", "--help"], capsys)
    assert "table, json or markdown" in out and "csv" not in out
    _, out, _ = run_cli(["census", "--help"], capsys)
    assert "table, csv, json or markdown" in out


def test_library_errors_name_parameters_not_flags(tmp_path):
    with tracelens.open(_trace(tmp_path)) as t:
        with pytest.raises(UsageError) as exc:
            t.census(top=-1)
        assert str(exc.value) == "top must be 0 (every row) or more (got -1)"
        with pytest.raises(UsageError) as exc:
            t.census(name="pretty")
        assert str(exc.value) == "unknown name 'pretty'; use one of: demangled, short, mangled"
    with pytest.raises(UsageError, match=r"^end \(1 ns\) is before start \(2 ns\)$"):
        tracelens.EventFilter(start_ns=2, end_ns=1)


def test_seconds_keep_microseconds_and_captions_use_table_digits(tmp_path, capsys):
    path = _trace(tmp_path)
    _, out, _ = run_cli(["census", path, "--timeunit", "s"], capsys)
    assert "0.000001" in out and "0.000" + " " not in out
    _, out, _ = run_cli(["census", path, "--timeunit", "s", "-f", "csv"], capsys)
    assert out.splitlines()[1].startswith("100.0,1.234e-06,1,1.234e-06,")
    _, out, _ = run_cli(["lineup", path, "--timeunit", "ms"], capsys)
    assert "Time (%) = share of 0.001 ms of GPU time" in out


def test_info_names_the_device_option_of_each_gpu(tmp_path, capsys):
    _, out, _ = run_cli(["info", _trace(tmp_path)], capsys)
    gpus = [line for line in out.splitlines() if line.startswith("gpu ")]
    assert gpus == [
        "gpu 0      NVIDIA H100 80GB HBM3 (--device 1, 0000:18:00.0, 132 SMs, 79.6 GiB, sm_90)",
        "gpu 1      NVIDIA H100 80GB HBM3 (--device 0, 0000:19:00.0, 132 SMs, 79.6 GiB, sm_90)",
    ]


def test_report_without_kernels_exits_3_as_census(tmp_path, capsys):
    b = synth.TraceBuilder("3.25.0")
    b.process(7, "x")
    b.nvtx_range("step", start=1, end=2, pid=7)
    path = b.write(tmp_path / "nvtx_only.sqlite")
    census = run_cli(["census", path], capsys)
    report = run_cli(["report", path, "-o", tmp_path / "r.html"], capsys)
    assert (
        census
        == report
        == (3, "", f"tracelens: {path}: no CUDA kernel data: was it captured with -t cuda?\n")
    )
    assert not (tmp_path / "r.html").exists()


def test_copies_without_kernels_say_what_the_trace_holds(tmp_path, capsys):
    """CUDA traced, copies and a memset but no kernel: every command that needs kernels
    (fingerprint and diff through the same check) says what is there, not 'was it captured
    with -t cuda?'."""
    b = synth.TraceBuilder("3.25.0")
    b.process(7, "x")
    for i in range(3):
        cid = b.runtime("cudaMemcpyAsync_v3020", start=i * 1000, end=i * 1000 + 100, pid=7)
        b.memcpy("HtoD", 4096, start=i * 1000 + 200, end=i * 1000 + 300, pid=7, correlation_id=cid)
    cid = b.runtime("cudaMemsetAsync_v3020", start=5000, end=5100, pid=7)
    b.memset(4096, start=5200, end=5300, pid=7, correlation_id=cid)
    path = b.write(tmp_path / "copies.sqlite")
    why = (
        f"tracelens: {path}: no CUDA kernel data: CUDA was traced and no kernel ran (it holds "
        "3 memory copies and 1 memset: see `tracelens memory`)\n"
    )
    for args in (["census"], ["steps"], ["fingerprint"], ["diff", path]):
        assert run_cli([args[0], path, *args[1:], "--no-cache"], capsys) == (3, "", why)


EVIL = '=HYPERLINK("x")\x1b]0;owned\x07\x1b[2J\x9bkernel'


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    path = _trace(tmp_path, name=EVIL, process="evil\x1b[31mproc")
    shown = 'HYPERLINK("x")\\x1b]0;owned\\x07\\x1b[2J\\x9bkernel'
    for args in (["census", path], ["census", path, "-f", "markdown"], ["info", path],
                 ["stakeout", path, "kernel"], ["timeline", path], ["lineup", path, "--show-other"],
                 ["decode", EVIL]):  # fmt: skip
        rc, out, _ = run_cli(args, capsys)
        assert rc == 0, args
        assert not any(ch in out for ch in "\x1b\x07\x9b"), args
    _, out, _ = run_cli(["census", path], capsys)
    assert shown in out
    _, out, _ = run_cli(["info", path], capsys)
    assert "process    7 evil\\x1b[31mproc" in out


def test_csv_text_that_a_spreadsheet_would_run_is_quoted(tmp_path, capsys):
    _, out, _ = run_cli(["census", _trace(tmp_path, name="@SUM(A1)"), "-f", "csv"], capsys)
    assert out.splitlines()[1].endswith(',"\'@SUM(A1)"')
    _, out, _ = run_cli(
        ["stakeout", _trace(tmp_path, name="-x", start=1_500), "x", "-f", "csv"], capsys
    )
    row = out.splitlines()[1].split(",")
    assert row[2] == "-500" and row[3] == '"\'-x"'  # numbers stay numbers


def test_output_file_is_replaced_whole_or_not_at_all(tmp_path, capsys, monkeypatch):
    path, out = _trace(tmp_path), tmp_path / "out.csv"
    out.write_text("old\n")

    def half_then_fail(self, text, **kw):
        with open(self, "w") as f:
            f.write(text[:5])
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(Path, "write_text", half_then_fail)
        rc, _, err = run_cli(["census", path, "-f", "csv", "-o", out], capsys)
    assert (rc, err) == (2, f"tracelens: {out}: cannot write (No space left on device)\n")
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "t.sqlite"]
    assert run_cli(["census", path, "-f", "csv", "-o", out], capsys)[0] == 0
    assert out.read_text().startswith("time_pct,")


def test_output_dash_is_stdout(tmp_path, capsys, monkeypatch):
    """`-o -` writes to stdout, as in most tools, and no file named '-' appears."""
    path = _trace(tmp_path)
    monkeypatch.chdir(tmp_path)
    plain = run_cli(["census", path, "-f", "csv"], capsys)
    assert run_cli(["census", path, "-f", "csv", "-o", "-"], capsys) == plain
    assert plain[0] == 0 and plain[1].startswith("time_pct,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]


@pytest.mark.parametrize("how", ["signal", "KeyboardInterrupt", "duckdb", "duckdb_runtime"])
def test_ctrl_c_is_one_line_and_exit_130(how, tmp_path, capsys, monkeypatch):
    import duckdb

    import tracelens.census

    def interrupted(*a, **kw):
        if how == "signal":
            os.kill(os.getpid(), signal.SIGINT)
        if how == "duckdb":
            raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
        if how == "duckdb_runtime":
            # our handler's exception raised inside DuckDB's scan comes out as this
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except BaseException:
                raise RuntimeError("Query interrupted") from None
        raise KeyboardInterrupt

    monkeypatch.setattr(tracelens.census, "census_rows", interrupted)
    # A run started in the background (nohup, `&` in a script) inherits SIGINT ignored;
    # the test is about an interactive terminal's Ctrl-C, so give it Python's default.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert run_cli(["census", _trace(tmp_path)], capsys) == (
            130,
            "",
            "tracelens: interrupted\n",
        )
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


@pytest.mark.parametrize(
    "args, hint",
    [
        (["census", "--start", "1ms", "--end", "2ms"],
         "window 1.00 ms–2.00 ms is outside the trace's span 1.00 µs–4.23 µs from session start"),
        (["timeline", "--start", "10s"],
         "window from 10.00 s is outside the trace's span 1.00 µs–4.23 µs from session start"),
        (["census", "--device", "3"], "no GPU work on device 3; devices present: 0"),
        (["lineup", "--stream", "9", "-f", "csv"], "no GPU work on stream 9; streams present: 7"),
        (["memory", "--pid", "5"], None),  # no memcpy/memset table: exit 3, not a hint
        (["danger", "--pid", "5"], "no GPU work on pid 5; processes present: 7"),
        (["stakeout", "vector", "--device", "1"], "no GPU work on device 1; devices present: 0"),
    ],
)  # fmt: skip
def test_an_empty_result_says_why_on_stderr_and_exits_0(args, hint, tmp_path, capsys):
    rc, out, err = run_cli([args[0], _trace(tmp_path), *args[1:]], capsys)
    if hint is None:
        assert rc == 3
        return
    assert rc == 0 and out
    assert err == f"tracelens: {hint}\n"


def test_a_result_with_rows_has_no_hint(tmp_path, capsys):
    assert run_cli(["census", _trace(tmp_path), "--device", "0"], capsys)[2] == ""


def test_a_pattern_that_matches_only_ignoring_case_offers_it(tmp_path, capsys):
    path = _trace(tmp_path)
    rc, out, err = run_cli(["stakeout", path, "VECTOR"], capsys)
    assert (rc, out.splitlines()[0]) == (0, "stakeout of t.sqlite: 'VECTOR' (contains), 0 launches")
    assert err == (
        "tracelens: no kernel in t.sqlite has a name containing 'VECTOR'; 1 name matches "
        "ignoring case ('vectorAdd'): add --ignore-case\n"
    )
    rc, out, _ = run_cli(["stakeout", path, "VECTORADD", "-i", "--match", "exact"], capsys)
    assert rc == 0 and "1 launch of vectorAdd" in out.splitlines()[0]
    with tracelens.open(path) as t:
        assert t.stakeout("V.C", match="regex", ignore_case=True).total_launches == 1
        with pytest.raises(UsageError, match="containing 'v.c'"):  # a literal, any case
            t.stakeout("v.c", match="contains", ignore_case=True)


def test_negative_queue_is_marked_early_and_explained(tmp_path, capsys):
    rc, out, _ = run_cli(["stakeout", _trace(tmp_path, start=1_500), "vector"], capsys)
    lines = out.splitlines()
    assert rc == 0
    assert any("-500 early" in line for line in lines)
    assert lines[-1].startswith("1 launch early: the kernel started before its launch call")
    _, out, _ = run_cli(["stakeout", _trace(tmp_path, start=1_500), "vector", "-f", "csv"], capsys)
    assert out.splitlines()[1].split(",")[2] == "-500"  # data stays a number
