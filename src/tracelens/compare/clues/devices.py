"""A device that changed unlike the others: the typical per-call change of each device pair
(``Context.devices``), which the trace-wide typical change averages away."""

from __future__ import annotations

from ...units import fmt_ns
from ..model import Clue
from .context import Context, count, outside
from .spec import make, prose, threshold

# Other devices named one by one in a clue's evidence; past that, their range.
_NAMED = 4


def devices_apart(x: Context) -> bool:
    """Two device pairs or more whose typical changes are ``device_ratio`` apart: the
    devices did not change alike (and no uniform change is the whole GPU side's)."""
    ratios = [d.typical.ratio for d in x.devices if d.typical.kernels]
    return len(ratios) >= 2 and max(ratios) / min(ratios) >= threshold("device_ratio")


def device_change(x: Context) -> list[Clue]:
    """Each device whose typical kernel changed beyond ``uniform_ratio`` when the devices
    did not change alike: named, with the other devices' typical changes."""
    if not devices_apart(x):
        return []
    known = [d for d in x.devices if d.typical.kernels]
    clues = []
    for d in known:
        r = d.typical.ratio
        if not outside(r, threshold("uniform_ratio")):
            continue
        others = [o for o in known if o is not d]
        slower = r > 1
        clues.append(
            make(
                "device_change",
                f"launch-weighted median of the per-call ratios of the {d.typical.kernels} "
                f"kernels {d.where} runs in both (middle half {d.typical.q25:.2f}–"
                f"{d.typical.q75:.2f}×), its kernel time {fmt_ns(d.time_a)} → "
                f"{fmt_ns(d.time_b)}; " + _others_evidence(others),
                impact_ns=x.per_unit(d.impact_ns),
                rows=(d.device,),
                where=d.where,
                ratio=r if slower else 1 / r,
                word="longer" if slower else "shorter",
                pace="slower" if slower else "faster",
                others=_others_headline(others),
            )
        )
    return clues


def _others_headline(others) -> str:
    if len(others) == 1:
        return f"{others[0].where}: {others[0].typical.ratio:.2f}×"
    ratios = [o.typical.ratio for o in others]
    return f"the {count(len(others))} other devices: {min(ratios):.2f}–{max(ratios):.2f}×"


def _others_evidence(others) -> str:
    named = [
        f"{o.where} {o.typical.ratio:.2f}× ({fmt_ns(o.time_a)} → {fmt_ns(o.time_b)})"
        for o in others[:_NAMED]
    ]
    more = len(others) - _NAMED
    return "typical change on " + ", ".join(named) + (f" and {more} more" if more > 0 else "")


def one_sided(x: Context) -> list:
    """The devices only one run launched on (aligned with nothing)."""
    return [al for al in x.alignment if bool(al.launches_a) != bool(al.launches_b)]


def moved_launches(x: Context) -> bool:
    """Whether the runs made the same launches, every kernel as often, and only placed
    them on other devices (a device only one run launched on): no path changed then, the
    devices' launch orders differ by where each launch ran."""
    import polars as pl

    if not one_sided(x) or not x.kernels.height:
        return False
    return bool(
        x.kernels.select(
            (pl.col("status") == "both") & (pl.col("a_instances") == pl.col("b_instances"))
        )
        .to_series()
        .all()
    )


def devices_differ(x: Context) -> list[Clue]:
    """Devices only one run launched on (the same program on more ranks or GPUs): said
    once, and not as a capture cut short; where the runs spread their work over different
    numbers of devices (``Context.replicas``), the per-step counts are per step and device."""
    alone = one_sided(x)
    if not alone:
        return []
    used_a = sum(1 for al in x.alignment if al.launches_a)
    used_b = sum(1 for al in x.alignment if al.launches_b)
    only = [
        f"only in {'B' if al.launches_b else 'A'}: device {al.device} "
        f"({count(al.launches_a or al.launches_b)} launches)"
        for al in alone
    ]
    ra, rb = x.replicas
    per_device = (
        ""
        if (ra, rb) == (1, 1)
        else f"; A runs its steps on {ra:,} device{'s' * (ra > 1)}, B on {rb:,}: the "
        "calls and danger lines compare per step and device"
    )
    return [
        make(
            "devices_differ",
            "; ".join(only) + per_device,
            rows=tuple(al.device for al in alone),
            a=count(used_a),
            b=count(used_b),
            devices_a="device" if used_a == 1 else "devices",
            devices_b="device" if used_b == 1 else "devices",
            verdict=prose("devices_differ", "verdict_moved") if moved_launches(x) else None,
        )
    ]
