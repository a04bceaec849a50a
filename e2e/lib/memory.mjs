// The budget, cells and checks the memory stories share.

import { outputs, waitIdle, waitOutput, waitRan } from './browser.mjs';

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

/**
 * Waits for the interrupted cell `index` to end with KeyboardInterrupt and
 * the kernel to be idle; returns what the cell printed on stdout, which
 * must be nothing for a cell the guard stopped before it finished.
 */
export async function interruptedOutput(page, index) {
  await waitOutput(page, index, 'KeyboardInterrupt');
  await waitRan(page, index);
  await waitIdle(page);
  return outputs(page, index).and(page.locator('[data-mime-type="application/vnd.jupyter.stdout"]')).allInnerTexts();
}
