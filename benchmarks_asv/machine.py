"""Describe this machine's GPU to asv: write its entry in ~/.asv-machine.json, print its name.

    python benchmarks_asv/machine.py

asv keeps results per machine name and draws one graph per distinct machine entry, so the name
is the GPU model (``nvidia-h200``, ``nvidia-a100-sxm4-80gb``) and the entry carries compute
capability, driver and CUDA versions: each GPU model gets its own graphs, and a driver upgrade
starts a new line. Fields that differ between lent machines of one kind are left out or
coarsened (hostname, kernel release; ``ram`` is left empty because these VMs report a MemTotal
that grows while they run), so runs on two machines of one kind share graphs.
"""
from __future__ import annotations

import os
import platform
import re
import subprocess
import sys


def _visible_gpu():
    """The GPU CUDA numbers 0 here, as nvidia-smi's -i argument (index or UUID)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return first or "0"


def gpu_fields():
    """{gpu, gpu_memory, compute_capability, driver, cuda}, or None without an NVIDIA GPU."""
    query = "name,memory.total,compute_cap,driver_version"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader", "-i", _visible_gpu()],
            capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return None
    if out.returncode != 0:
        return None
    name, memory, cc, driver = (f.strip() for f in out.stdout.strip().splitlines()[0].split(","))
    from cuda.bindings import driver as cu

    err, version = cu.cuDriverGetVersion()
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDriverGetVersion failed: {err}")
    return {"gpu": name, "gpu_memory": memory, "compute_capability": cc, "driver": driver,
            "cuda": f"{version // 1000}.{version % 1000 // 10}"}


def machine_entry():
    from asv import util

    gpu = gpu_fields()
    if gpu is None:
        name = "no-gpu-" + platform.node()
        gpu = {"gpu": "none", "gpu_memory": "", "compute_capability": "", "driver": "",
               "cuda": ""}
    else:
        name = re.sub(r"[^a-z0-9.]+", "-", gpu["gpu"].lower()).strip("-")
    return {"machine": name, "os": platform.system(), "arch": platform.machine(),
            "cpu": util.get_cpu_info(), "num_cpu": str(os.cpu_count()), "ram": "", **gpu}


def main():
    from asv.machine import MachineCollection

    entry = machine_entry()
    MachineCollection.save(entry["machine"], entry)
    print(entry["machine"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
