"""tracelens cache info|clear: what the columnar cache holds, and emptying it."""

from __future__ import annotations

import time

import typer

from ._app import app

cache_app = typer.Typer(
    help="The columnar cache of big traces: `cache info` shows it, `cache clear` empties it.",
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def info() -> None:
    """Where the cache is, its limits, and every cached trace (most recently used first)."""
    from ..cache_evict import cache_info

    print(render_info(cache_info()), end="")


@cache_app.command("clear")
def clear() -> None:
    """Remove every cached trace that no running command reads (the traces themselves are
    never touched)."""
    from ..cache import default_root
    from ..cache_evict import clear as clear_cache

    done = clear_cache()
    kept = (
        f"; kept {done.kept} that running commands read ({done.kept_bytes / 1e6:,.1f} MB)"
        if done.kept
        else ""
    )
    print(
        f"removed {done.removed} cached trace{'' if done.removed == 1 else 's'} "
        f"({done.size_bytes / 1e6:,.1f} MB) from {default_root()}{kept}"
    )


def render_info(result) -> str:
    lines = [
        f"cache      {result.root}",
        _state(result),
        f"holds      {len(result.entries)} trace{'' if len(result.entries) == 1 else 's'}, "
        f"{result.size_bytes / 1e6:,.1f} MB"
        + (
            f"; {result.building} build(s) in progress or left by a killed run"
            if result.building
            else ""
        ),
    ]
    for entry in result.entries:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.last_used))
        stale = "  (older cache format: evicted first)" if entry.stale else ""
        export = "  (its SQLite export)" if entry.export else ""
        held = "  (in use: kept by eviction and clear)" if entry.held else ""
        lines.append(
            f"  {entry.size_bytes / 1e6:9,.1f} MB  used {used}  {entry.source}{export}{stale}{held}"
        )
    return "\n".join(lines) + "\n"


def _state(result) -> str:
    """On (and what is cached), off, or on but unusable: why, and what commands do then."""
    if not result.enabled:
        state = "off (TRACELENS_NO_CACHE)"
    elif result.unwritable:
        served = "; the traces it holds are still read" if result.entries else ""
        return (
            f"state      unusable: {result.unwritable}; commands read traces directly "
            f"and cache nothing{served}"
        )
    else:
        state = "on"
    return (
        f"state      {state}; traces of {result.min_bytes / 1e6:,.0f} MB or more are cached, "
        f"up to {result.max_bytes / 1e6:,.0f} MB in all (least recently used go first)"
    )
