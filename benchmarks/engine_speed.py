"""Engine speed and memory, measured side by side in one run (a script, not a test).

    .venv/bin/python benchmarks/engine_speed.py            # full grid, 1 and 2 BLAS threads
    .venv/bin/python benchmarks/engine_speed.py --quick    # n = 1024 only
    .venv/bin/python benchmarks/engine_speed.py --smoke    # the smallest run: does the script run

Prints, per case, the median time of the engine, of a textbook numpy version
and of torch.nn.functional.scaled_dot_product_attention (when torch is
installed), and the ratios engine/textbook and engine/torch. Then the
tracemalloc peak and time of naive vs blocked attention. Each thread count runs
in its own subprocess so BLAS is pinned before numpy loads.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _median_time(fn, repeat):
    fn()                                               # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _textbook(np, Q, K, V, causal):
    s = Q @ K.T / np.sqrt(np.float32(Q.shape[-1]))
    if causal:
        s = s + np.triu(np.full(s.shape, -np.inf, dtype=s.dtype), 1)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V


def _torch_fn(threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def run(Q, K, V, causal):
        with torch.no_grad():
            return sdpa(*(torch.from_numpy(a) for a in (Q, K, V)), is_causal=causal)
    return run


def speed_grid(threads, ns, ds, repeat):
    import numpy as np
    import solutions as S
    torch_run = _torch_fn(threads)
    rows = []
    for n in ns:
        for d in ds:
            rng = np.random.default_rng(0)
            Q, K, V = (rng.normal(size=(n, d)).astype(np.float32) for _ in range(3))
            for causal in (False, True):
                engine = (lambda: S.causal_attention(Q, K, V)) if causal else \
                         (lambda: S.scaled_dot_product_attention(Q, K, V))
                row = {"threads": threads, "n": n, "d": d, "causal": causal,
                       "engine": _median_time(engine, repeat),
                       "textbook": _median_time(lambda: _textbook(np, Q, K, V, causal), repeat)}
                if torch_run:
                    row["torch"] = _median_time(lambda: torch_run(Q, K, V, causal), repeat)
                rows.append(row)
    return rows


def memory_grid(ns, d=64, block=512):
    import tracemalloc
    import numpy as np
    import solutions as S
    rows = []
    for n in ns:
        rng = np.random.default_rng(0)
        Q, K, V = (rng.normal(size=(n, d)).astype(np.float32) for _ in range(3))
        row = {"n": n}
        for name, fn in (("naive", lambda: S.causal_attention(Q, K, V)),
                         ("blocked", lambda: S.blocked_attention(Q, K, V, causal=True, block=block))):
            tracemalloc.start()
            t = time.perf_counter()
            fn()
            row[name + "_s"] = time.perf_counter() - t
            row[name + "_peak"] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        rows.append(row)
    return rows


def _child(args):
    if args.smoke:
        out = {"speed": speed_grid(args.threads, [64], [16], 1), "memory": memory_grid([1024], block=256)}
        return print(json.dumps(out))
    ns = [1024] if args.quick else [1024, 4096, 8192]
    out = {"speed": speed_grid(args.threads, ns, [64, 128], args.repeat)}
    if args.threads == 1 and not args.quick:
        out["memory"] = memory_grid([4096, 8192, 16384])
    print(json.dumps(out))


def _run_child(threads, argv):
    env = dict(os.environ, **{v: str(threads) for v in THREAD_VARS})
    cmd = [sys.executable, __file__, "--child", "--threads", str(threads), *argv]
    return json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)


def _print_speed(rows):
    print(f"{'thr':>3} {'n':>5} {'d':>4} {'causal':>6} {'engine s':>9} {'textbook':>9} "
          f"{'torch':>8} {'eng/text':>8} {'eng/torch':>9}")
    for r in rows:
        torch_s = r.get("torch")
        print(f"{r['threads']:>3} {r['n']:>5} {r['d']:>4} {str(r['causal']):>6} {r['engine']:>9.4f} "
              f"{r['textbook']:>9.4f} {torch_s if torch_s else float('nan'):>8.4f} "
              f"{r['engine'] / r['textbook']:>8.2f} "
              f"{(r['engine'] / torch_s) if torch_s else float('nan'):>9.2f}")


def _print_memory(rows):
    print(f"\n{'n':>6} {'naive MB':>9} {'blocked MB':>10} {'peak ratio':>10} {'naive s':>8} "
          f"{'blocked s':>9} {'time ratio':>10}")
    for r in rows:
        print(f"{r['n']:>6} {r['naive_peak'] / 1e6:>9.1f} {r['blocked_peak'] / 1e6:>10.1f} "
              f"{r['blocked_peak'] / r['naive_peak']:>10.3f} {r['naive_s']:>8.3f} "
              f"{r['blocked_s']:>9.3f} {r['blocked_s'] / r['naive_s']:>10.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="the smallest run, to check the script runs (tests/house/test_benchmarks.py)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args)
    extra = (["--smoke"] if args.smoke else ["--quick"] if args.quick else []) + ["--repeat", str(args.repeat)]
    results = [_run_child(t, extra) for t in (1, 2)]
    _print_speed(results[0]["speed"] + results[1]["speed"])
    if "memory" in results[0]:
        _print_memory(results[0]["memory"])


if __name__ == "__main__":
    main()
