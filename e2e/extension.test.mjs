// Story 4, in JupyterLab: the guard where users look, with jupyter-guard's
// lab and server extensions installed (as the wheel installs them). A cell
// grows memory under a small JUPYTER_GUARD_LIMIT. The status bar shows the
// notebook's kernel's memory against the budget, rising while the cell
// grows, then PAUSED when the guard pauses it. Clicking that item opens the
// guarded kernels panel; its Resume lets the cell go on (the guard pauses it
// again further on), and its Interrupt ends the cell with KeyboardInterrupt
// and the kernel's variables kept. jupyter_server's /metrics carries the
// kernel's figures.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GUARDED, notebook } from './lib/jupyter.mjs';
import { TIMEOUT, openNotebook, outputs, runCell, seen, waitIdle, waitOutput, waitRan } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';

const LIMIT = '600MiB';
const MiB = 2 ** 20;

const CELLS = [
  'kept = "defined before the big cell"\nprint(kept)',
  // As in memory.test.mjs: 2 MiB at a time, about 100 MiB/s at most, up
  // to 1 GiB, far past the pause line.
  [
    'import time',
    'chunks = []',
    'for i in range(512):',
    '    chunks.append(b"x" * (2 << 20))',
    '    time.sleep(0.02)',
    'print("the cell finished: jupyter-guard did not stop it")',
  ].join('\n'),
  'print(kept, len(chunks) > 0)',
];

/** The status-bar item of jupyter-guard. */
const item = (page) => page.locator('.jp-GuardStatus');

/** "Guard: 412 MiB / 600 MiB (69%) · busy" read as { used (bytes), budget, state }. */
function parseItem(text) {
  const m = text.match(/^Guard: ([\d.]+) (B|KiB|MiB|GiB) \/ ([\d.]+) (MiB|GiB) \(\d+%\) · (\S+)$/);
  if (!m) return null;
  const scale = { B: 1, KiB: 2 ** 10, MiB, GiB: 2 ** 30 };
  return { used: Number(m[1]) * scale[m[2]], budget: Number(m[3]) * scale[m[4]], state: m[5] };
}

/** What the server extension says of every guarded kernel (guardctl status --json). */
async function guarded(page, server) {
  const resp = await page.request.get(`${server.url}/jupyter-guard/kernels`);
  assert.equal(resp.status(), 200, await resp.text());
  return resp.json();
}

/** Polls fn until it returns something truthy. */
async function until(what, fn, timeout = TIMEOUT) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

story('extension (JupyterLab): memory / budget and PAUSED in the status bar, Resume and Interrupt in the panel', {
  name: 'extension-lab',
  env: { JUPYTER_GUARD_LIMIT: LIMIT },
  notebooks: { 'grow.ipynb': notebook(GUARDED, CELLS) },
}, async ({ server, page }) => {
  // The extension's own requests, to check how often it polls.
  const polls = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/jupyter-guard/kernels')) polls.push(Date.now());
  });

  await openNotebook(page, server, 'grow.ipynb', GUARDED, 'lab');
  const [kernel] = await guarded(page, server);
  assert.ok(kernel, 'the server extension lists the notebook\'s kernel');

  // The item shows the idle kernel's memory against the 600 MiB budget.
  await item(page).filter({ hasText: /· idle$/ }).waitFor();
  const idle = parseItem(await item(page).innerText());
  assert.ok(idle, `the item reads ${await item(page).innerText()}`);
  assert.equal(idle.budget, 600 * MiB);
  assert.ok(idle.used > 10 * MiB && idle.used < 300 * MiB, `an idle kernel uses ${idle.used / MiB} MiB`);
  assert.match(await item(page).getAttribute('title'), /budget from /);

  await runCell(page, 0);
  await waitOutput(page, 0, 'defined before the big cell');

  // While the cell grows, the item shows the figure rising, and busy.
  await runCell(page, 1);
  const readings = [];
  await until('PAUSED in the status bar', async () => {
    const r = parseItem(await item(page).innerText());
    if (r && r.state === 'busy' && readings.at(-1)?.used !== r.used) readings.push(r);
    return r?.state === 'PAUSED';
  });
  const rising = readings.filter((r) => r.used > idle.used + 20 * MiB);
  assert.ok(rising.length >= 2, `the item showed the memory rising while busy: ${JSON.stringify(readings)}`);
  assert.ok(rising.every((r, i) => i === 0 || r.used >= rising[i - 1].used), JSON.stringify(rising));

  // Paused: the item says so plainly, near the budget, while JupyterLab's
  // own status still says Busy; the cell shows the pause notice.
  await waitOutput(page, 1, 'jupyter-guard paused the kernel before it ran out of memory.');
  const paused = await item(page).innerText();
  assert.match(paused, /^Guard: .* · PAUSED$/);
  assert.ok(parseItem(paused).used >= 0.9 * 600 * MiB, paused);
  assert.equal(await item(page).getAttribute('data-state'), 'paused');
  await page.locator('.jp-StatusBar-Widget').screenshot({ path: join(SCREENSHOTS, 'extension-statusbar.png') });

  // The item opens the panel: the kernel, PAUSED, Resume enabled.
  await item(page).click();
  const panel = page.locator('#jupyter-guard-panel');
  await panel.waitFor();
  const row = panel.locator(`li[data-kernel-id="${kernel.kernel_id}"]`);
  await row.locator('.jp-GuardPanel-state', { hasText: 'PAUSED' }).waitFor();
  const resume = row.getByRole('button', { name: 'Resume', exact: true });
  assert.ok(await resume.isEnabled(), 'Resume is enabled for the paused kernel');
  // The ledger of the selected kernel shows the running cell.
  await panel.locator('.jp-GuardPanel-cells tr', { hasText: 'running' }).first().waitFor();
  await page.screenshot({ path: join(SCREENSHOTS, 'extension-panel.png') });

  // Resume: the cell goes on, and the guard pauses it again further on.
  const before = (await guarded(page, server))[0];
  assert.equal(before.state, 'paused');
  await resume.click();
  const again = await until('the guard to pause the resumed cell again', async () => {
    const [k] = await guarded(page, server);
    return k.actions?.resume >= 1 && k.actions?.pause >= 2 && k.state === 'paused' ? k : null;
  });
  assert.ok(again.memory.used_bytes > before.memory.used_bytes,
    `the resumed cell grew: ${before.memory.used_bytes} then ${again.memory.used_bytes}`);
  await item(page).filter({ hasText: /· PAUSED$/ }).waitFor();

  // Interrupt from the panel ends the cell; the kernel keeps its variables.
  await row.locator('.jp-GuardPanel-state', { hasText: 'PAUSED' }).waitFor();
  await row.getByRole('button', { name: 'Interrupt', exact: true }).click();
  await waitOutput(page, 1, 'KeyboardInterrupt');
  await waitRan(page, 1);
  await waitIdle(page);
  const printed = await outputs(page, 1).and(page.locator('[data-mime-type="application/vnd.jupyter.stdout"]')).allInnerTexts();
  assert.deepEqual(printed, [], 'the cell did not finish');
  await runCell(page, 2);
  await waitOutput(page, 2, 'defined before the big cell True');
  await item(page).filter({ hasText: /· idle$/ }).waitFor();
  await row.locator('.jp-GuardPanel-state', { hasText: 'idle' }).waitFor();
  assert.ok(await row.getByRole('button', { name: 'Resume', exact: true }).isDisabled(), 'Resume is off once the kernel is not paused');

  // jupyter_server's /metrics has the kernel's figures from guardctl metrics
  // (prometheus_client writes them as floats: 6.291456e+08).
  const metrics = await (await page.request.get(`${server.url}/metrics`)).text();
  const sample = (name, extra = '') => {
    const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`kernel_id="${kernel.kernel_id}"`) && l.includes(extra));
    assert.ok(line, `/metrics has ${name} of the kernel${extra && ` with ${extra}`}:\n${metrics.split('\n').filter((l) => l.includes('jupyter_guard')).join('\n')}`);
    return Number(line.split(' ').at(-1));
  };
  assert.equal(sample('jupyter_guard_memory_budget_bytes'), 600 * MiB);
  assert.ok(sample('jupyter_guard_memory_used_bytes') > 500 * MiB, 'the kernel holds what the cell grew');
  assert.ok(sample('jupyter_guard_pauses_total') >= 2);
  assert.equal(sample('jupyter_guard_state', 'state="idle"'), 1);
  assert.equal(sample('jupyter_guard_deaths_total', 'cause="segfault"'), 0);

  // It polled no more than once a second (a margin for timers firing late).
  const gaps = polls.slice(1).map((t, i) => t - polls[i]);
  const tooSoon = gaps.filter((g) => g < 900);
  assert.ok(tooSoon.length <= gaps.length / 10, `polls closer than 1 s: ${tooSoon.length} of ${gaps.length}`);

  const shown = await seen(page);
  assert.deepEqual(shown.dialogs, [], 'no dialog opened');
});
