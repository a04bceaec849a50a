// Story 3, in JupyterLab: an ordinary notebook reads the same on the
// guarded kernel as on the plain one. The same cells run on "Python 3" and
// on "Python 3 (guarded)" in one server, and what the page renders under
// each cell (MIME type and text of every output) must be identical: text
// streams, results, rich HTML and Markdown, an SVG, a display updated in
// place, a line read from the user with input(), and a traceback.
// jupyter-guard's lab extension shows its status-bar item, and asks the
// server, only for the guarded one.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { GUARDED, PLAIN, notebook } from './lib/jupyter.mjs';
import { cell, openNotebook, renderedOutputs, runCell, screenshot, seen, waitIdle, waitOutput, waitRan } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';

// Each cell, and the text that shows its outputs are all on the page (some
// renderers, Markdown's among them, fill their element a moment later).
const CELLS = [
  ['print("hello from the kernel")\nx = 6 * 7\nx', '42'],
  ['import sys\nprint("to stdout")\nprint("to stderr", file=sys.stderr)', 'to stderr'],
  [[
    'from IPython.display import HTML, Markdown, SVG, display',
    'display(HTML("<b>bold</b> and <i>italic</i> HTML"))',
    'display(Markdown("**Markdown** with `code`"))',
    'display(SVG(\'<svg xmlns="http://www.w3.org/2000/svg" width="60" height="20"><rect width="60" height="20" fill="teal"/></svg>\'))',
  ].join('\n'), 'Markdown with code'],
  ['import numpy as np\nnp.arange(12).reshape(3, 4)', '[ 8,  9, 10, 11]])'],
  ['h = display("first", display_id=True)\nh.update("updated in place")', "'updated in place'"],
  ['import time\nfor i in range(3):\n    print("tick", i, flush=True)\n    time.sleep(0.2)', 'tick 2'],
  ['name = input("Your name: ")\nprint("hello,", name)', 'hello, Ada'],
  ['def f(x):\n    return 1 / x\n\nf(0)', 'ZeroDivisionError: division by zero'],
];
const SOURCES = CELLS.map(([source]) => source);
const INPUT_CELL = 6;

/** Runs every cell in order as a user would, answering the input() prompt; returns what each shows. */
async function runAll(page) {
  const shown = [];
  for (let i = 0; i < CELLS.length; i++) {
    await runCell(page, i);
    if (i === INPUT_CELL) {
      const box = cell(page, i).locator('input.jp-Stdin-input');
      await box.fill('Ada');
      await box.press('Enter');
      // The prompt fades out, then leaves the page.
      await cell(page, i).locator('.jp-OutputArea-stdin-item').waitFor({ state: 'detached' });
    }
    await waitRan(page, i);
    await waitIdle(page);
    await waitOutput(page, i, CELLS[i][1]);
    if (i === 2) await cell(page, i).locator('[data-mime-type="image/svg+xml"] img, [data-mime-type="image/svg+xml"] svg').first().waitFor();
    shown.push(await renderedOutputs(page, i));
  }
  return shown;
}

story('normal notebook: the guarded kernel renders the same outputs as the plain kernel', {
  name: 'normal',
  notebooks: {
    'plain.ipynb': notebook(PLAIN, SOURCES),
    'guarded.ipynb': notebook(GUARDED, SOURCES),
  },
}, async ({ server, page }) => {
  // Tall enough for every cell to be on screen in the screenshot.
  await page.setViewportSize({ width: 1280, height: 1500 });

  // jupyter-guard's lab extension asks the server only about guarded kernels.
  const polls = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/jupyter-guard/')) polls.push(r.url());
  });

  await openNotebook(page, server, 'plain.ipynb', PLAIN);
  const plain = await runAll(page);
  assert.deepEqual(polls, [], 'the extension polled while the plain kernel ran');
  assert.equal(await page.locator('.jp-GuardStatus:visible').count(), 0, 'a guard item for the plain kernel');

  await openNotebook(page, server, 'guarded.ipynb', GUARDED);
  const guarded = await runAll(page);
  assert.ok(polls.length > 0, 'the extension polled for the guarded kernel');
  await page.locator('.jp-GuardStatus', { hasText: / · idle$/ }).waitFor();
  await cell(page, 0).scrollIntoViewIfNeeded();
  await screenshot(page, join(SCREENSHOTS, 'normal.png'));

  // The plain run is the reference; check it shows what these cells make,
  // so two empty pages cannot pass as equal.
  const texts = plain.map((outs) => outs.map((o) => o.text).join('\n'));
  assert.match(texts[0], /^hello from the kernel\n42$/);
  assert.match(texts[1], /to stdout\nto stderr/);
  assert.deepEqual(plain[2].map((o) => o.mime), ['text/html', 'text/markdown', 'image/svg+xml']);
  assert.match(texts[3], /array\(\[\[ 0, {2}1, {2}2, {2}3\],/);
  assert.equal(texts[4], "'updated in place'");
  assert.equal(texts[5], 'tick 0\ntick 1\ntick 2');
  assert.match(texts[6], /^Your name: +Ada\nhello, Ada$/);
  assert.match(texts[7], /ZeroDivisionError: division by zero$/);

  for (let i = 0; i < CELLS.length; i++) {
    assert.deepEqual(guarded[i], plain[i], `cell ${i} (${SOURCES[i].split('\n')[0]}) renders differently on the guarded kernel`);
  }
  const shown = await seen(page);
  assert.deepEqual(shown.dialogs, []);
  assert.ok(!shown.statuses.some((s) => /dead|restarting|unknown/i.test(s)), `kernel statuses: ${shown.statuses}`);
});
