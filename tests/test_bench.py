"""The GEMM benchmark's measurement order (CPU: the timer is replaced by a recorder)."""
from nbkernels.matmul import bench


def test_abba_times_every_job_in_both_orders_and_merges_the_samples(monkeypatch):
    calls = []

    def fake_time(fn, sets, reps):
        calls.append((fn, reps))
        fake_time.host_seconds = 0.5 * fn()  # host time: half the job's device time
        return None, [fn() * (1 + len(calls) % 2)] * reps  # the two passes differ

    monkeypatch.setattr(bench, "_time", fake_time)
    jobs = {"cublas": (lambda: 1.0, None), 0: (lambda: 2.0, None), 1: (lambda: 3.0, None)}
    dev, host = bench.abba(jobs, 7)
    order = [next(n for n, (f, _) in jobs.items() if f is fn) for fn, _ in calls]
    assert order == ["cublas", 0, 1, 1, 0, "cublas"]  # A B C, then C B A
    assert [r for _, r in calls] == [3, 3, 3, 4, 4, 4]  # 7 calls each in all
    # one median over both passes' samples (3 + 4 of them): the 4 decide
    # cublas: 3 x 2.0 (call 1), 4 x 1.0 (call 6); job 0: 3 x 2.0, 4 x 4.0; job 1: 3 x 6.0, 4 x 3.0
    assert dev == {"cublas": 1.0, 0: 4.0, 1: 3.0}
    assert host == {"cublas": 0.5, 0: 1.0, 1: 1.5}


def test_abba_keeps_each_pass_median(monkeypatch):
    def fake_time(fn, sets, reps):
        fake_time.host_seconds = 0.0
        fake_time.n += 1
        return fn() * fake_time.n, [fn() * fake_time.n] * reps

    fake_time.n = 0
    monkeypatch.setattr(bench, "_time", fake_time)
    bench.abba({"a": (lambda: 1.0, None), "b": (lambda: 10.0, None)}, 4)
    # calls: a (x1), b (x2), then b (x3), a (x4)
    assert bench.abba.passes == {"a": (1.0, 4.0), "b": (20.0, 30.0)}


def test_sizes_take_squares_and_mxnxk_shapes_and_refuse_anything_else():
    import pytest

    assert bench.parse_shape("2048") == (2048, 2048, 2048)
    assert bench.parse_shape("4096x11008x4096") == (4096, 11008, 4096)
    assert bench.parse_shape("8192X8192X1024") == (8192, 8192, 1024)
    for bad in ("4096x11008", "0", "4096x-1x4", "abc", "1x2x3x4", ""):
        with pytest.raises(SystemExit, match="MxNxK"):
            bench.parse_shape(bad)
    with pytest.raises(SystemExit, match="--shapes: each item"):
        bench.parse_shape("4096x11008", "--shapes")
