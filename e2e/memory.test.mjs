// Story 1, in JupyterLab and in Notebook 7: a cell grows memory under a small
// JUPYTER_GUARD_LIMIT. The user sees the guard's warning under that cell,
// then the pause notice; doing what it says, pressing the toolbar's
// interrupt button (■) in JupyterLab, or Kernel > Interrupt Kernel in
// Notebook 7's menu bar, ends the cell with KeyboardInterrupt, and the next
// cell still finds the variable defined before: the kernel and its state
// survived.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { GUARDED, notebook } from './lib/jupyter.mjs';
import { cell, openNotebook, prompt, runCell, screenshot, seen, toolbarButton, waitOutput, waitRan } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';
import { GROW, KEPT, LIMIT, interruptedOutput } from './lib/memory.mjs';

const CELLS = [KEPT, GROW, 'print(kept)'];

for (const ui of ['lab', 'notebook']) {
  const where = ui === 'lab' ? 'JupyterLab' : 'Notebook 7';
  story(`memory (${where}): warning, pause notice, ${ui === 'lab' ? '■' : 'Kernel > Interrupt'} keeps the kernel and its variables`, {
    name: `memory-${ui}`,
    env: { JUPYTER_GUARD_LIMIT: LIMIT },
    notebooks: { 'memory.ipynb': notebook(GUARDED, CELLS) },
  }, async ({ server, page }) => {
    await openNotebook(page, server, 'memory.ipynb', GUARDED, ui);

    await runCell(page, 0);
    await waitOutput(page, 0, 'defined before the big cell');

    await runCell(page, 1);
    // The warning, in the cell, while it runs.
    const warning = await waitOutput(page, 1, 'jupyter-guard: memory warning.');
    assert.match(await warning.getAttribute('data-mime-type'), /stderr/);
    assert.match(await prompt(page, 1).innerText(), /\[\*\]/, 'the cell is still running at the warning');

    // Then the pause notice, which says what to do.
    const notice = await waitOutput(page, 1, 'jupyter-guard paused the kernel before it ran out of memory.');
    const text = await notice.innerText();
    // jupyter-guard's lab extension is loaded (lib/jupyter.mjs): the notice names its panel too.
    assert.match(text, /Interrupt \(■, Kernel > Interrupt Kernel, or the panel\): ends this cell; the kernel and its variables survive\./);
    await notice.scrollIntoViewIfNeeded();
    if (ui === 'lab') await screenshot(page, join(SCREENSHOTS, 'pause-notice.png'));

    // The user does what it says: in JupyterLab presses ■ in the notebook's
    // toolbar, in Notebook 7 picks Kernel > Interrupt from the menu bar.
    if (ui === 'lab') {
      await toolbarButton(page, 'Interrupt the kernel').click();
    } else {
      await page.getByRole('menuitem', { name: 'Kernel', exact: true }).click();
      await page.getByRole('menuitem', { name: /^Interrupt/ }).click();
    }
    assert.deepEqual(await interruptedOutput(page, 1), [], 'the guard stopped the cell before it finished');

    // The kernel and its variables survived.
    await runCell(page, 2);
    await waitOutput(page, 2, 'defined before the big cell');
    await waitRan(page, 2);
    await cell(page, 2).scrollIntoViewIfNeeded();
    if (ui === 'lab') await screenshot(page, join(SCREENSHOTS, 'pause-interrupted.png'));

    const shown = await seen(page);
    assert.deepEqual(shown.dialogs, [], 'no dialog opened');
    const odd = [...shown.statuses, ...shown.indicator].filter((s) => /dead|restarting|unknown/i.test(s));
    assert.deepEqual(odd, [], 'the kernel status passed through these');
  });
}
