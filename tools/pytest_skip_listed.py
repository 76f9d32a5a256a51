"""pytest plugin (``-p tools.pytest_skip_listed``): deselect the tests whose node ids are listed,
one per line, in the file named by NBK_SKIP_LISTED. For GPU runs split over several device
calls: a later call skips what an earlier call's ``-v`` log reported as PASSED."""
import os


def pytest_collection_modifyitems(config, items):
    path = os.environ.get("NBK_SKIP_LISTED")
    if not path:
        return
    with open(path) as f:
        done = {line.strip() for line in f if line.strip()}
    keep = [it for it in items if it.nodeid not in done]
    dropped = [it for it in items if it.nodeid in done]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
