"""The bundled sample class for `make demo`: 41 submissions named by what they show.

Correct ones (some written unusually), one per misconception in the
catalogue, unfinished work, damaged notebooks and hostile code. Each
submission is the release filled with the instructor's answers, with a few
functions replaced (appended to the cell where they live), then, for the
damaged ones, broken on purpose.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat

from .seeds import ASSIGNMENT_ID
from .submissions import write_submission

_SDPA = "def scaled_dot_product_attention(Q, K, V):\n    w = softmax({scores}, axis={axis})\n    return {ret}\n"
_CAUSAL = ("def causal_attention(Q, K, V):\n    {body}\n    return w @ V, w\n")


def _sdpa(scores="Q @ K.T / np.sqrt(Q.shape[-1])", axis=-1, ret="w @ V, w"):
    return {"scaled_dot_product_attention": _SDPA.format(scores=scores, axis=axis, ret=ret)}


def _causal(body):
    return {"causal_attention": _CAUSAL.format(body=body)}


_S = "Q @ K.T / np.sqrt(Q.shape[-1])"
MISTAKES = {
    "no-scaling": _sdpa(scores="Q @ K.T"),
    "scale-by-dk": _sdpa(scores="Q @ K.T / Q.shape[-1]"),
    "scale-by-dv": _sdpa(scores="Q @ K.T / np.sqrt(V.shape[-1])"),
    "softmax-wrong-axis": _sdpa(axis=0),
    "weights-transposed": _sdpa(ret="w @ V, w.T"),
    "outputs-swapped": _sdpa(ret="w, w @ V"),
    "no-max-subtraction": {"softmax": "def softmax(x, axis=-1):\n    e = np.exp(x)\n"
                                      "    return e / e.sum(axis=axis, keepdims=True)\n"},
    "softmax-global-sum": {"softmax": "def softmax(x, axis=-1):\n    e = np.exp(x - x.max())\n"
                                      "    return e / e.sum()\n"},
    "mask-after-softmax": _causal(f"w = softmax({_S}) * np.tril(np.ones((len(Q), len(K))))"),
    "diagonal-masked": {"causal_mask": "def causal_mask(n):\n    return np.triu(np.full((n, n), -np.inf))\n"},
    "future-visible": {"causal_mask": "def causal_mask(n):\n    return np.tril(np.full((n, n), -np.inf), -1)\n"},
    "multiplicative-mask": {"causal_mask": "def causal_mask(n):\n    return np.tril(np.ones((n, n)))\n",
                            **_causal(f"w = softmax({_S} * causal_mask(len(Q)))")},
    "mask-missing": _causal(f"w = softmax({_S})"),
    "dtype-ignored": {"attention_memory_bytes": "def attention_memory_bytes(n, dtype_bytes=2):\n"
                                                "    return n * n * 2\n"},
    "linear-in-n": {"attention_memory_bytes": "def attention_memory_bytes(n, dtype_bytes=2):\n"
                                              "    return n * dtype_bytes\n"},
    "expansion-missing": {"ffn_memory_bytes": "def ffn_memory_bytes(n, d_model, dtype_bytes=2, expansion=4):\n"
                                              "    return n * d_model * dtype_bytes\n"},
    "bytes-as-gb": {"attention_memory_bytes": "def attention_memory_bytes(n, dtype_bytes=2):\n"
                                              "    return n * n * dtype_bytes / 1e9\n"},
    "crossover-off-by-one": {"crossover_length": "def crossover_length(d_model, dtype_bytes=2, expansion=4):\n"
                                                 "    return expansion * d_model + 1\n"},
    "cross-causal-mask": {"cross_attention": "def cross_attention(Q, K, V):\n"
                                             "    m = np.triu(np.full((len(Q), len(K)), -np.inf), 1)\n"
                                             f"    w = softmax({_S} + m)\n    return w @ V, w\n"},
}

CORRECT = {
    "correct-1": {}, "correct-2": {}, "correct-3": {}, "correct-4": {},
    "correct-einsum": {"scaled_dot_product_attention": "def scaled_dot_product_attention(Q, K, V):\n"
                       "    w = softmax(np.einsum('qd,kd->qk', Q, K) / np.sqrt(Q.shape[1]))\n"
                       "    return np.einsum('qk,kv->qv', w, V), w\n"},
    "correct-float32": {"causal_attention": "def causal_attention(Q, K, V):\n"
                        "    Q, K, V = (a.astype(np.float32) for a in (Q, K, V))\n"
                        f"    w = softmax({_S} + causal_mask(len(Q))).astype(np.float32)\n    return w @ V, w\n"},
    "correct-finite-mask": {"causal_mask": "def causal_mask(n):\n"
                            "    return np.where(np.triu(np.ones((n, n)), 1) > 0, -1e9, 0.0)\n"},
    "correct-loop-crossover": {"crossover_length": "def crossover_length(d_model, dtype_bytes=2, expansion=4):\n"
                               "    n = 1\n    while n * n < n * expansion * d_model:\n        n += 1\n"
                               "    return n\n"},
}

UNFINISHED = {"unfinished-ex4": {"cross_attention": "def cross_attention(Q, K, V):\n"
                                 "    raise NotImplementedError()\n"},
              "unfinished-ex3": {"crossover_length": "def crossover_length(d_model, dtype_bytes=2, expansion=4):\n"
                                 "    pass\n"}}

HOSTILE = {
    "hostile-infinite-loop": {"causal_mask": "while True:\n    pass\n"},
    "hostile-reads-source": {"softmax": "import glob\nleak = [open(p).read() for p in glob.glob('/**/source/**/*.ipynb',"
                                        " recursive=True)]\n"},
    "hostile-fork-bomb": {"cross_attention": "import os\nfor _ in range(100):\n    try:\n        os.fork()\n"
                                             "    except OSError:\n        break\n"},
    "hostile-exits": {"crossover_length": "import os\nos._exit(1)\n"},
}


def _damage_missing(folder: Path) -> None:
    (folder / "ex3_memory.ipynb").unlink()


def _damage_edited_tests(folder: Path) -> None:
    path = folder / "ex2_causal_mask.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex2_causal_visible":
            cell.source = "print('all tests passed')"
    nbformat.write(nb, path)


def _damage_bad_json(folder: Path) -> None:
    path = folder / "ex4_cross_attention.ipynb"
    path.write_text(path.read_text()[:-300])


def _damage_points(folder: Path) -> None:
    path = folder / "ex1_attention.ipynb"
    data = json.loads(path.read_text())
    for cell in data["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex1_attention":
            cell["metadata"]["nbgrader"]["points"] = 500
    path.write_text(json.dumps(data))


DAMAGED = {"damaged-missing-notebook": _damage_missing, "damaged-edited-tests": _damage_edited_tests,
           "damaged-invalid-json": _damage_bad_json, "damaged-points-inflated": _damage_points}


# the mistakes most students make, a second time each (a realistic class repeats itself)
REPEATS = {f"{k}-2": MISTAKES[k] for k in ("no-scaling", "mask-after-softmax", "mask-missing", "scale-by-dk")}


def students() -> dict[str, dict]:
    """student id -> overrides (damaged ones use the reference answers, then get broken)."""
    return {**CORRECT, **MISTAKES, **REPEATS, **UNFINISHED, **HOSTILE, **{k: {} for k in DAMAGED}}


def lay_out(course: Path, assignment: str = ASSIGNMENT_ID) -> list[str]:
    """Write every sample submission under ``course/submitted/<student>/<assignment>/``."""
    release, source = course / "release" / assignment, course / "source" / assignment
    root = course / "submitted"
    if root.exists():
        shutil.rmtree(root)
    for student, overrides in students().items():
        folder = write_submission(release, source, root / student / assignment, overrides)
        if student in DAMAGED:
            DAMAGED[student](folder)
    return sorted(students())
