"""The machine an export describes: its GPUs (``TARGET_INFO_GPU``, and the
``TARGET_INFO_CUDA_GPU`` table of nsys <= 2021) and its system environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Launch limits of every GPU tracelens builds (the same in both GPU tables).
_LAUNCH_LIMITS = {
    "maxThreadsPerBlock": 1024,
    "maxRegistersPerBlock": 65536,
    "maxBlockDimX": 1024,
    "maxBlockDimY": 1024,
    "maxBlockDimZ": 64,
    "maxGridDimX": 2147483647,
    "maxGridDimY": 65535,
    "maxGridDimZ": 65535,
}


@dataclass(frozen=True)
class GpuSpec:
    """What both GPU tables say about one GPU (each in its own column names)."""

    name: str
    bus_location: str
    l2_cache_size: int
    total_memory: int
    memory_bandwidth: int
    clock_rate: int
    sm_count: int
    major: int
    minor: int


def gpu_row(
    vm_id: int,
    id: int,  # noqa: A002 - the column's name
    spec: GpuSpec,
    *,
    uuid: str,
    chip_name: str,
    cuda_device: int | None,
) -> dict[str, Any]:
    """A TARGET_INFO_GPU row (see :meth:`HardwareMethods.gpu`)."""
    return {
        "vmId": vm_id << 48,
        "id": id,
        "deviceId": id,  # the 2020.5 name of the column
        "name": spec.name,
        "busLocation": spec.bus_location,
        "isDiscrete": 1,
        "l2CacheSize": spec.l2_cache_size,
        "totalMemory": spec.total_memory,
        "memoryBandwidth": spec.memory_bandwidth,
        "clockRate": spec.clock_rate,
        "smCount": spec.sm_count,
        "pwGpuId": id,
        "uuid": uuid,
        "luid": 0,
        "chipName": chip_name,
        "cuDevice": id if cuda_device is None else cuda_device,
        "computeMajor": spec.major,
        "computeMinor": spec.minor,
        "smMajor": spec.major,
        "smMinor": spec.minor,
        "threadsPerWarp": 32,
        **_LAUNCH_LIMITS,
    }


def cuda_gpu_row(vm_id: int, id: int, spec: GpuSpec) -> dict[str, Any]:  # noqa: A002
    """A TARGET_INFO_CUDA_GPU row, the table of nsys <= 2021 (see :meth:`HardwareMethods.gpu`)."""
    return {
        "vmId": vm_id << 48,
        "name": spec.name,
        "pciBusId": spec.bus_location,
        "globalMemoryBandwidth": spec.memory_bandwidth,
        "globalMemorySize": spec.total_memory,
        "constantMemorySize": 65536,
        "l2CacheSize": spec.l2_cache_size,
        "numThreadsPerWarp": 32,
        "coreClockRate": spec.clock_rate,
        "numMemcpyEngines": 3,
        "numMultiprocessors": spec.sm_count,
        "maxIPC": 4,
        "maxWarpsPerMultiprocessor": 64,
        "maxBlocksPerMultiprocessor": 32,
        "maxSharedMemoryPerBlock": 49152,
        **_LAUNCH_LIMITS,
        "computeCapabilityMajor": spec.major,
        "computeCapabilityMinor": spec.minor,
        "deviceId": id,
    }


class HardwareMethods:
    """The :class:`~tracelens.synth.TraceBuilder` methods that describe the machine (they
    use the builder's ``vm_id``, ``has_table`` and ``add_row``)."""

    vm_id: int

    def gpu(
        self,
        id: int = 0,  # noqa: A002 - the column's name
        name: str = "NVIDIA H100 80GB HBM3",
        *,
        sm_count: int = 132,
        total_memory: int = 85_520_809_984,
        compute_capability: tuple[int, int] = (9, 0),
        bus_location: str = "0000:18:00.0",
        chip_name: str = "GH100",
        uuid: str | None = None,
        clock_rate: int = 1_980_000_000,
        l2_cache_size: int = 52_428_800,
        memory_bandwidth: int = 3_352_320_000_000,
        cuda_device: int | None = None,
        **extra: Any,
    ) -> bool:
        """Describe a GPU in TARGET_INFO_GPU (and TARGET_INFO_CUDA_GPU in 2020.5 exports).

        Returns False when this schema's DDL has no such table (nothing is written).
        """
        major, minor = compute_capability
        uuid = uuid or f"00000000-0000-4000-8000-{id:012x}"
        spec = GpuSpec(
            name, bus_location, l2_cache_size, total_memory, memory_bandwidth, clock_rate,
            sm_count, major, minor,
        )  # fmt: skip
        written = False
        if self.has_table("TARGET_INFO_GPU"):
            row = gpu_row(
                self.vm_id, id, spec, uuid=uuid, chip_name=chip_name, cuda_device=cuda_device
            )
            row.update(extra)
            self.add_row("TARGET_INFO_GPU", **row)
            written = True
        if self.has_table("TARGET_INFO_CUDA_GPU"):  # nsys <= 2021
            self.add_row("TARGET_INFO_CUDA_GPU", **cuda_gpu_row(self.vm_id, id, spec))
            written = True
        return written

    def system_env(self, name: str | bytes, value: str | bytes, *, enum: int = 0) -> None:
        """A TARGET_INFO_SYSTEM_ENV row (real files hold bytes that are not UTF-8 here)."""
        self.add_row(
            "TARGET_INFO_SYSTEM_ENV",
            globalVid=self.vm_id << 48,
            devStateName="Local",
            name=name,
            nameEnum=enum,
            value=value,
        )
