"""CSV and JSON of polars DataFrames, written columnar (tracelens/render_data.py): the exact
bytes of the tricky cases, the same text as the per-row writer (which Rows still take), and
no per-row Python on the way (nvtx --kernels writes 4.1M rows)."""

from __future__ import annotations

import datetime
import math
import random

import polars as pl
import pytest

from tracelens import render, render_data
from tracelens.rows import Rows

TRICKY = pl.DataFrame(
    {
        "name": ["plain", "a,b", 'say "hi"', "two\nlines", "cr\r", "", None, "=1+2", "-x", "é漢字"],
        "total_ns": [1, None, -5, 2**62, 0, 7, 8, 9, 10, 11],
        "avg_ns": [0.1, 1e-5, None, float("nan"), float("inf"), 1e16, 2.5, -0.0, 1 / 3, 5e-324],
        "ok": [True, False, None, True, True, True, True, True, True, True],
    }
)

TRICKY_CSV = (
    "name,total_ns,avg_ns,ok\n"
    "plain,1,0.1,true\n"
    '"a,b",,1e-05,false\n'
    '"say ""hi""",-5,,\n'
    '"two\nlines",4611686018427387904,,true\n'
    '"cr\r",0,,true\n'
    '"",7,1e+16,true\n'
    ",8,2.5,true\n"
    '"\'=1+2",9,-0.0,true\n'
    '"\'-x",10,0.3333333333333333,true\n'
    "é漢字,11,5e-324,true\n"
)

TRICKY_JSON = (
    '[{"name":"plain","total_ns":1,"avg_ns":0.1,"ok":true},'
    '{"name":"a,b","total_ns":null,"avg_ns":1e-05,"ok":false},'
    '{"name":"say \\"hi\\"","total_ns":-5,"avg_ns":null,"ok":null},'
    '{"name":"two\\nlines","total_ns":4611686018427387904,"avg_ns":null,"ok":true},'
    '{"name":"cr\\r","total_ns":0,"avg_ns":null,"ok":true},'
    '{"name":"","total_ns":7,"avg_ns":1e+16,"ok":true},'
    '{"name":null,"total_ns":8,"avg_ns":2.5,"ok":true},'
    '{"name":"=1+2","total_ns":9,"avg_ns":-0.0,"ok":true},'
    '{"name":"-x","total_ns":10,"avg_ns":0.3333333333333333,"ok":true},'
    '{"name":"é漢字","total_ns":11,"avg_ns":5e-324,"ok":true}]\n'
)


def test_tricky_csv_bytes():
    assert render.csv(TRICKY) == TRICKY_CSV


def test_tricky_json_bytes():
    assert render.json(TRICKY) == TRICKY_JSON


def test_empty_frame():
    empty = TRICKY.clear()
    assert render.csv(empty) == "name,total_ns,avg_ns,ok\n"
    assert render.json(empty) == "[]\n"


def test_times_converted_as_python_rounds():
    # 3 ns / 1e6: polars' scalar division (a multiplication by 1e-6) gives 3.0000000000000004e-06
    df = pl.DataFrame({"total_ns": [3, 1234567, None], "avg_ns": [0.1, 11113376274560965.0, 2.5]})
    assert render.frame(df, fmt="csv", timeunit="ms") == (
        "total_ms,avg_ms\n3e-06,1e-07\n1.234567,11113376274.560965\n,2.5e-06\n"
    )


def _random_frame(n: int, seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    words = ["", "a", "x,y", 'q"', "n\nl", "\r", "=f", "+1", "@a", "\tt", "\\", "\x01\x1f", "漢"]
    floats = [rng.gauss(0, 1) * 10.0 ** rng.randint(-30, 30) for _ in range(n)]
    floats[:4] = [math.nan, -math.inf, None, 1.5e-5]
    return pl.DataFrame(
        {
            "name": [rng.choice([*words, None]) for _ in range(n)],
            "total_ns": [rng.choice([None, -1, rng.randint(0, 10**15)]) for _ in range(n)],
            "avg_ns": floats,
            "f32": pl.Series([rng.random() for _ in range(n)], dtype=pl.Float32),
            "flag": [rng.choice([True, False, None]) for _ in range(n)],
            "cat": pl.Series([rng.choice(words) for _ in range(n)], dtype=pl.Categorical),
            "u8": pl.Series([rng.randint(0, 255) for _ in range(n)], dtype=pl.UInt8),
        }
    )


@pytest.mark.parametrize("timeunit", ["ns", "us", "ms", "s"])
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_columnar_equals_per_row_writer(fmt, timeunit):
    df = _random_frame(2000, seed=len(timeunit) + len(fmt))
    rows = Rows.from_polars(df)
    assert render.frame(df, fmt=fmt, timeunit=timeunit) == render.frame(
        rows, fmt=fmt, timeunit=timeunit
    )


def test_polars_frames_never_become_python_rows(monkeypatch):
    def per_row(*_args, **_kwargs):
        raise AssertionError("a polars frame went through the per-row writer")

    monkeypatch.setattr(Rows, "from_polars", per_row)
    monkeypatch.setattr(render_data, "_csv_field", lambda v: per_row() if v == 1 else str(v))
    df = _random_frame(50, seed=1)
    render.frame(df, fmt="csv", timeunit="ms")
    render.frame(df, fmt="json", timeunit="us")
    assert render_data.columnar(df)


def test_written_in_bounded_chunks(monkeypatch):
    monkeypatch.setattr(render_data, "CHUNK_ROWS", 3)
    df = TRICKY
    csv_parts = list(render.csv_chunks(df))
    json_parts = list(render.json_chunks(df))
    assert len(csv_parts) == 1 + 4  # the header, then 10 rows in chunks of 3
    assert "".join(csv_parts) == TRICKY_CSV
    assert "".join(json_parts) == TRICKY_JSON


def test_unknown_types_take_the_per_row_writer():
    df = pl.DataFrame({"d": [datetime.date(2020, 1, 2)], "n": [1]})
    assert not render_data.columnar(df)
    assert render.csv(df) == "d,n\n2020-01-02,1\n"


def test_output_written_in_slices(monkeypatch, tmp_path, capsys):
    from tracelens.cli import _output

    monkeypatch.setattr(_output, "SLICE_CHARS", 3)
    text = render.csv(TRICKY) + "bad byte: \udcff\n"
    expected = render.encodable(text)
    _output.emit(text, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_bytes() == expected.encode()
    _output.emit(text, None)
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_chunks_without_small_floats_or_quotes(monkeypatch, fmt):
    # The rewrites of floats below 1e-4 and of quotes are left out of chunks that have none.
    monkeypatch.setattr(render_data, "CHUNK_ROWS", 2)
    df = pl.DataFrame(
        {
            "name": ["a,b", "c", 'q"', "=x", "d\ne", None, "", "f"],
            "avg_ns": [0.5, 1e20, 1e-5, None, math.nan, 123.25, -0.0, 1e-3],
            "x": [None] * 8,
        },
        schema={"name": pl.String, "avg_ns": pl.Float64, "x": pl.Float64},
    )
    assert render.frame(df, fmt=fmt) == render.frame(Rows.from_polars(df), fmt=fmt)


# Times whose conversion polars' own scalar division and round (what render.convert_times
# once was: `(col / 1e6).round(7)`) give another last digit than the per-row conversion
# (Python's division and round, what csv/json of Rows and `--timeunit` of every table use).
DISAGREEING = {"ms": 1964651.15, "us": 751492114994.1085, "s": 1421615.25}


@pytest.mark.parametrize("timeunit", ["us", "ms", "s"])
def test_frames_convert_times_as_rows_do(timeunit):
    from tracelens.filters import TIME_UNITS_NS

    value, kept = DISAGREEING[timeunit], render_data.ROUND_DECIMALS[timeunit]
    by_polars = pl.select((pl.lit(value) / TIME_UNITS_NS[timeunit]).round(kept)).item()
    by_python = round(value / TIME_UNITS_NS[timeunit], kept)
    assert by_polars != by_python  # the value tells the two apart
    df = pl.DataFrame({"name": ["k", "l", None], "avg_ns": [value, 2.5, None], "n": [1, 2, 3]})
    by_rows = render_data.convert_rows(Rows.from_polars(df), timeunit)
    converted = render.convert_times(df, timeunit)
    assert converted.columns == list(by_rows.columns) == ["name", f"avg_{timeunit}", "n"]
    assert converted.rows() == list(by_rows.data)
    assert converted["avg_" + timeunit][0] == by_python
