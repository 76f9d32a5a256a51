"""Bad input to the row kernels: a clear error naming the argument, and ``out`` untouched.

Runs in numba's simulator (child interpreter): every check happens before a launch, so the
same calls behave alike on a GPU (tests/test_rows_gpu.py runs the valid ones there).
"""
import json

from .simrun import run_simulated

# (label, call as Python source, exception type name, words the message must contain)
CASES = [
    ("weight length", "nbk.rms_norm(x, w[:5], out=out)", "NbkernelsError",
     ["weight", "length 64", "(5,)"]),
    ("weight dtype", "nbk.rms_norm(x, w.astype(np.float64), out=out)", "TypeError",
     ["weight", "float64"]),
    ("x dtype", "nbk.layer_norm(x.astype(np.int32), w, w, out=out)", "TypeError",
     ["x dtype", "int32"]),
    ("residual shape", "nbk.rms_norm(x, w, residual=x[:2], out=out)", "NbkernelsError",
     ["residual.shape", "(3, 64)", "(2, 64)"]),
    ("residual dtype", "nbk.rms_norm(x, w, residual=x.astype(np.float16), out=out)", "TypeError",
     ["residual dtype", "float16"]),
    ("out shape", "nbk.softmax(x, out=out[:, :10])", "NbkernelsError", ["out.shape", "(3, 10)"]),
    ("out dtype", "nbk.softmax(x, out=out.astype(np.float16))", "TypeError", ["out dtype"]),
    ("bias length", "nbk.layer_norm(x, w, w[:3], out=out)", "NbkernelsError", ["bias"]),
    ("axis", "nbk.softmax(x, axis=2, out=out)", "NbkernelsError", ["axis", "2"]),
    ("axis type", "nbk.softmax(x, axis=1.0, out=out)", "NbkernelsError", ["axis"]),
    ("packed odd", "nbk.swiglu(x[:, :63], out=out)", "NbkernelsError", ["even", "63"]),
    ("up shape", "nbk.swiglu(x, x[:, :32], out=out)", "NbkernelsError", ["up.shape"]),
    ("scalar x", "nbk.softmax(np.float32(1.0))", "NbkernelsError", ["x"]),
    ("not an array", "nbk.rms_norm([1.0, 2.0], w)", "NbkernelsError", ["x", "list"]),
    ("residual_out alone", "nbk.rms_norm(x, w, residual_out=out, out=out)", "NbkernelsError",
     ["residual_out", "residual"]),
    ("outputs share memory", "nbk.rms_norm(x, w, residual=x + 1, out=out, residual_out=out)",
     "NbkernelsError", ["residual_out", "shares memory with out"]),
    ("read-only out", "nbk.softmax(x, out=ro(out))", "NbkernelsError",
     ["softmax: out is read-only", "flags.writeable"]),
    ("read-only residual_out", "nbk.rms_norm(x, w, residual=x + 1, out=out, "
     "residual_out=ro(np.empty_like(x)))", "NbkernelsError",
     ["rms_norm: residual_out is read-only"]),
    ("config", "nbk.softmax(x, out=out, config=nbk.RowConfig('warp', 64))", "NbkernelsError",
     ["warp", "32"]),
    ("config too small", "nbk.softmax(np.ones((2, 5000), np.float32), "
     "config=nbk.RowConfig('warp', 32, 4))", "NbkernelsError", ["holds 1024", "5000"]),
    # softmax's lanes layout (perf-notes r63): on another op, rows longer than it holds
    ("lanes elsewhere", "nbk.swiglu(x, x, out=out, config=nbk.RowConfig('lanes', 8, 16))",
     "NbkernelsError", ["swiglu", "lanes layout", "softmax, rms_norm and layer_norm"]),
    ("lanes too small", "nbk.softmax(x, out=out, config=nbk.RowConfig('lanes', 8, 16, "
     "per_thread=4))", "NbkernelsError", ["lanes layout of 8 threads holds 32", "have 64"]),
    ("lanes threads", "nbk.softmax(x, out=out, config=nbk.RowConfig('lanes', 12, 8))",
     "NbkernelsError", ["lanes variant", "threads=12"]),
]

SCRIPT = r'''
import json, sys
import numpy as np
import nbkernels as nbk
x = np.random.default_rng().standard_normal((3, 64)).astype(np.float32)
w = np.ones(64, np.float32)


def ro(a):
    a.flags.writeable = False
    return a


res = []
for label, src, _, _ in json.loads(sys.argv[1]):
    out = np.full((3, 64), 7.0, np.float32)
    before = x.copy()
    try:
        eval(src)
        res.append([label, None, "", True, True])
    except Exception as e:
        res.append([label, type(e).__name__, str(e), bool((out == 7.0).all()),
                    bool((x == before).all())])
print("RESULT " + json.dumps(res))
'''


def test_bad_input_is_a_clear_error_and_leaves_out_untouched():
    proc = run_simulated(["-c", SCRIPT, json.dumps(CASES)])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
    got = {r[0]: r[1:] for r in json.loads(line[0][7:])}
    problems = []
    for label, src, exc, words in CASES:
        name, msg, out_kept, x_kept = got[label]
        if name != exc and not (exc == "NbkernelsError" and name == "ArchError"):
            problems.append(f"{label}: {src} raised {name} ({msg}), expected {exc}")
        missing = [w for w in words if w not in msg]
        if missing:
            problems.append(f"{label}: message {msg!r} lacks {missing}")
        if not (out_kept and x_kept):
            problems.append(f"{label}: out or x was modified")
    assert not problems, "\n".join(problems)
