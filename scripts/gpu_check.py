"""GPU check for a machine with CuPy and a CUDA GPU: the GPU tests, then one timing.

    python scripts/gpu_check.py

Runs tests/engine/test_engine_gpu.py with pytest, then times the engine's causal and
blocked attention on CuPy float32 arrays (n = 8192, d = 64), synchronising the
device around each timed call, and prints the medians.
"""
from __future__ import annotations

import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _time(cp, fn, repeat=10):
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-rs", str(ROOT / "tests/engine/test_engine_gpu.py")],
                         cwd=ROOT)
    import cupy as cp
    sys.path.insert(0, str(ROOT))
    import solutions as S
    rng = cp.random.default_rng(0)
    Q, K, V = (rng.standard_normal((8192, 64), dtype=cp.float32) for _ in range(3))
    naive = _time(cp, lambda: S.causal_attention(Q, K, V))
    blocked = _time(cp, lambda: S.blocked_attention(Q, K, V, causal=True, block=1024))
    print(f"cupy n=8192 d=64 f32: causal {naive * 1e3:.2f} ms, blocked {blocked * 1e3:.2f} ms (medians)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
