"""What turning TensorFlow's oneDNN off would cost the CNN story's users.

On a CPU where oneDNN's ops crash when TensorFlow's allocator refuses them
(docs/cnn-story.md), TF_ENABLE_ONEDNN_OPTS=0 would let the guard keep the
kernel; this measures what it costs every fit. It runs the model cells of
testdata/demo/cnn.ipynb as a script, then times fit(batch_size=64,
epochs=1), with oneDNN on and off in turns (N pairs), each in a fresh
process with the environment the guard gives a kernel (TensorFlow's CPU
allocator held by BFC; no limit, so nothing is refused), and prints each
time and each pair's ratio. Run it on an idle machine.

    python3 bench/onednn_cost.py [--pairs N]

Needs bench/.venv-cnn (bench/cnn_story.py creates it).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "testdata" / "demo" / "cnn.ipynb"
MODEL_CELLS = 3  # imports, data, model: the cells before the fit that does not fit
TIMED = """
import time as _time
_t = _time.perf_counter()
model.fit(x, y, batch_size=64, epochs=1, verbose=0)
print("FIT_SECONDS", _time.perf_counter() - _t)
"""


def script() -> str:
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    return "\n".join("".join(c["source"]) for c in cells[:MODEL_CELLS]) + TIMED


def fit_seconds(python: Path, code: str, onednn: str) -> float:
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPU_ALLOCATOR_USE_BFC="true", TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("FIT_SECONDS")))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--venv", type=Path, default=ROOT / "bench" / ".venv-cnn")
    args = p.parse_args()
    python = args.venv / "bin" / "python"
    if not python.exists():
        sys.exit(f"onednn_cost: no {python}: run bench/cnn_story.py once to create it")
    code = script()
    print(f"onednn_cost: fit(batch_size=64, epochs=1) of {NOTEBOOK.relative_to(ROOT)}'s model, "
          f"{args.pairs} pairs from {time.strftime('%F %H:%M', time.gmtime())} UTC", flush=True)
    for i in range(1, args.pairs + 1):
        on = fit_seconds(python, code, "1")
        off = fit_seconds(python, code, "0")
        print(f"pair {i}: oneDNN on {on:.1f} s, off {off:.1f} s, off/on {off / on:.2f}", flush=True)


if __name__ == "__main__":
    main()
