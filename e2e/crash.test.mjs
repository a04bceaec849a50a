// Story 2, in JupyterLab and in Notebook 7: a cell segfaults. The user sees
// the guard's diagnosis under that cell, the kernel indicator comes back to
// idle with no "kernel died" / "kernel restarting" dialog (the proxy never
// dies, so Jupyter never sees a dead kernel), and the next cell runs, on a
// kernel the guard restarted.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { GUARDED, notebook } from './lib/jupyter.mjs';
import { cell, kernelStatus, openNotebook, runCell, screenshot, seen, waitIdle, waitOutput, waitRan } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';

// Long enough for a restart on a busy machine (it takes well under a second
// here).
const SETTLE_TIMEOUT = 30_000;

const CELLS = [
  'before = "set before the crash"\nprint(before)',
  'import ctypes\nctypes.string_at(0)',
  'print("the kernel runs again; variables from before the crash:", "before" in globals())',
];

for (const ui of ['lab', 'notebook']) {
  const where = ui === 'lab' ? 'JupyterLab' : 'Notebook 7';
  story(`crash (${where}): the diagnosis under the cell, the kernel back to idle, no dialogs, the next cell runs`, {
    name: `crash-${ui}`,
    notebooks: { 'crash.ipynb': notebook(GUARDED, CELLS) },
  }, async ({ t, server, page }) => {
    await openNotebook(page, server, 'crash.ipynb', GUARDED, ui);
    const kernelsBefore = await (await fetch(`${server.url}/api/kernels`)).json();
    assert.equal(kernelsBefore.length, 1);

    await runCell(page, 0);
    await waitOutput(page, 0, 'set before the crash');

    await runCell(page, 1);
    // An error output (ename KernelDied); the page shows its traceback,
    // which the guard starts with this line.
    const diagnosis = await waitOutput(page, 1, 'jupyter-guard: kernel died');
    await waitRan(page, 1);
    // The page shows it hard-wrapped; read it as one line.
    const text = (await diagnosis.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /The kernel crashed with a segmentation fault \(SIGSEGV\) in ctypes/);
    assert.match(text, /called from cell \[2\], at line 2: ctypes\.string_at\(0\)/);
    assert.match(text, /What to do/);

    // The guard restarts the kernel by itself; the indicator should settle
    // on idle with nothing more from the user.
    await t.test('the kernel indicator settles on idle after the restart, before the next cell', async () => {
      await waitIdle(page, SETTLE_TIMEOUT);
      if (ui === 'lab') {
        await kernelStatus(page).filter({ hasText: 'Python 3 (guarded) | Idle' }).waitFor({ timeout: SETTLE_TIMEOUT });
      }
    });

    // The next cell runs, on the new kernel; then the indicator is idle.
    await runCell(page, 2);
    await waitOutput(page, 2, 'the kernel runs again; variables from before the crash: False');
    await waitRan(page, 2);
    await waitIdle(page);
    if (ui === 'lab') await kernelStatus(page).filter({ hasText: 'Python 3 (guarded) | Idle' }).waitFor();
    await cell(page, 1).scrollIntoViewIfNeeded();
    await screenshot(page, join(SCREENSHOTS, ui === 'lab' ? 'diagnosis.png' : 'diagnosis-notebook7.png'));

    // What the user was shown meanwhile: no dialog, no toast, and a kernel
    // that was never reported dead or restarting.
    const shown = await seen(page);
    assert.deepEqual(shown.dialogs, [], 'dialogs opened');
    assert.deepEqual(shown.toasts, [], 'toasts shown');
    const odd = [...shown.statuses, ...shown.indicator].filter((s) => /dead|restarting|unknown|terminating|autorestarting/i.test(s));
    assert.deepEqual(odd, [], 'the kernel status passed through these');
    // Jupyter itself saw one kernel all along: the same one, never restarted.
    const kernelsAfter = await (await fetch(`${server.url}/api/kernels`)).json();
    assert.deepEqual(kernelsAfter.map((k) => k.id), kernelsBefore.map((k) => k.id));
    assert.doesNotMatch(server.log(), /KernelRestarter|restarting kernel|Kernel restarted/i);
  });
}
