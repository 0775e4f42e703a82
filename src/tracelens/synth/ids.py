"""nsys's serialized process and thread ids (``globalPid``, ``globalTid``)."""

from __future__ import annotations


def global_pid(pid: int, *, vm_id: int = 1, hw_id: int = 0) -> int:
    """nsys's serialized process id: bits 24-47 PID, 48-55 VM id, 56-63 hardware id.

    Real exports carry VM id 1 (``globalPid >> 48 == 1``), hence the default.
    """
    for what, value, bits in (("pid", pid, 24), ("vm_id", vm_id, 8), ("hw_id", hw_id, 8)):
        if not 0 <= value < (1 << bits):
            raise ValueError(f"{what} {value} does not fit in {bits} bits")
    return (hw_id << 56) | (vm_id << 48) | (pid << 24)


def global_tid(pid: int, tid: int, *, vm_id: int = 1, hw_id: int = 0) -> int:
    """nsys's serialized thread id: :func:`global_pid` with the TID in bits 0-23."""
    tid_bits(tid)
    return global_pid(pid, vm_id=vm_id, hw_id=hw_id) | tid


def tid_bits(tid: int) -> int:
    """``tid`` as the low 24 bits of a globalTid; ValueError if it does not fit."""
    if not 0 <= tid < (1 << 24):
        raise ValueError(f"tid {tid} does not fit in 24 bits")
    return tid
