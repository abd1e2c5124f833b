"""The HBM capacity a GPU's memory check compares its bytes with (docs/model.md R.12).

Datasheets give GPU memory in round gigabytes ("80 GB" on H100); the stacks hold binary
gibibytes, and the NVIDIA driver reports the device's total in MiB: 81,559 MiB
(85.5e9 B) on H100, 81,920 MiB on A100 80GB (NVML through nvidia-smi, as tabulated by Modal,
"Why does an NVIDIA H100 80GB card offer 85.52 GB?", thundergolfer.com/blog/
nvidia-gpu-memory-capacity). The paper reads the datasheet's number as 10⁹ bytes (spec §3.2);
`physics.hbm_capacity: device` reads the driver's where a preset gives it, as a ratio to the
datasheet's (`hardware.hbm_device_ratio`), so that a what-if on `hardware.hbm_gb` moves both.
"""

from __future__ import annotations

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.switches import HbmCapacity, Physics


def memory_capacity_bytes(hw: HardwareSpec, physics: Physics) -> float:
    """Bytes a GPU's training state may fill under `physics.hbm_capacity`: under `device` the
    driver-reported capacity, `HardwareSpec.hbm_bytes` · `hbm_device_ratio`, where the preset
    gives the ratio, else the datasheet's `hbm_bytes`."""
    ratio = hw.hbm_device_ratio
    if physics.hbm_capacity is HbmCapacity.DEVICE and ratio is not None:
        return hw.hbm_bytes * ratio
    return hw.hbm_bytes
