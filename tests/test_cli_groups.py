"""Option groups declared once (cli/_common.grouped): a command's ``filters`` and ``out``
parameters become the group's options, in their place, and reach the command as one
object each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracelens.cli import _common as c


def _app(seen: dict):
    app = typer.Typer()

    @app.command()
    @c.grouped
    def probe(
        first: Annotated[int, typer.Option("--first")] = 0,
        filters: c.Filters = c.FILTERS,
        middle: Annotated[int, typer.Option("--middle")] = 0,
        out: c.Output = c.OUTPUT,
    ) -> None:
        seen.update(first=first, filters=filters, middle=middle, out=out)

    @app.command()
    @c.grouped
    def window(filters: c.Filters = c.WINDOW_FILTERS) -> None:
        seen.update(filters=filters)

    return app


def _options(app, name: str) -> list[str]:
    command = typer.main.get_command(app).commands[name]
    return [max(p.opts, key=len) for p in command.params]


def test_groups_expand_in_place_and_arrive_as_objects(tmp_path):
    seen: dict = {}
    app = _app(seen)
    assert _options(app, "probe") == [
        "--first", "--device", "--pid", "--stream", "--start", "--end", "--nvtx", "--steps",
        "--middle", "--timeunit", "--format", "--output",
    ]  # fmt: skip
    assert _options(app, "window") == ["--device", "--pid", "--stream", "--start", "--end"]
    args = ["probe", "--first", "1", "--pid", "7", "--start", "2ms", "--steps", "2:3"]
    args += ["--middle", "5", "-f", "csv", "-o", str(tmp_path / "x")]
    typer.main.get_command(app).main(args, standalone_mode=False)
    assert seen == {
        "first": 1,
        "filters": c.Filters(pid=7, start=2_000_000, step=(2, 3)),
        "middle": 5,
        "out": c.Output(fmt="csv", output=Path(tmp_path / "x")),
    }
    typer.main.get_command(app).main(["window", "--device", "1"], standalone_mode=False)
    assert seen["filters"] == c.Filters(device=1)
