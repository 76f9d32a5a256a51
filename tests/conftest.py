import os

import pytest


def _gpu_cc():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return None
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
        return cuda.get_current_device().compute_capability
    except Exception:
        return None


GPU_CC = _gpu_cc()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped where none is present")
    config.addinivalue_line(
        "markers", "min_cc(major, minor): needs a GPU of at least this compute capability"
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "gpu" in item.keywords and GPU_CC is None:
            item.add_marker(pytest.mark.skip(reason="no CUDA GPU present"))
        m = item.get_closest_marker("min_cc")
        if m is not None and (GPU_CC is None or GPU_CC < tuple(m.args)):
            item.add_marker(pytest.mark.skip(reason=f"needs compute capability >= {m.args}"))
