// The budget and cells the memory stories share.

// The budget, set in the server's environment, which the kernels inherit.
// An idle ipykernel uses ~70 MiB of it; the warning comes at 80% (480 MiB),
// the pause at 95% (570 MiB).
export const LIMIT = '600MiB';

// A variable the user must still have after the guard's pause.
export const KEPT = 'kept = "defined before the big cell"\nprint(kept)';

// Grows 2 MiB at a time, each byte written so it counts in RSS, about
// 100 MiB/s at most: slow enough that the guard samples it between the
// warning and the pause line even on a busy machine. It stops at 1 GiB:
// far past the pause line, harmless to the machine if the guard failed.
export const GROW = [
  'import time',
  'chunks = []',
  'for i in range(512):',
  '    chunks.append(b"x" * (2 << 20))',
  '    time.sleep(0.02)',
  'print("the cell finished: jupyter-guard did not stop it")',
].join('\n');
