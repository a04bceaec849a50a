// Story 6, in JupyterLab with jupyter-resource-usage loaded: what a user
// reads about a guarded kernel's memory is the kernel's own. With no limit
// set, a kernel holding a 300 MiB bytes object shows 300-360 MiB in the
// status bar, in the guarded kernels panel, in guardctl status and on
// jupyter_server's /metrics, and jupyter-resource-usage's Kernel Usage
// panel agrees within 10 %; the host's figure (or a cgroup's), which a
// budget of host memory counts, is shown apart and named. A kernelspec
// that sets MEM_LIMIT, as JupyterHub's spawners set it for a user's
// server, gives a 1 GiB budget that the status bar says comes from
// MEM_LIMIT.

import assert from 'node:assert/strict';
import { openNotebook, runCell, until, waitOutput } from './lib/browser.mjs';
import { guardctlStatus, item, parseItem, readChart, readRow } from './lib/guard.mjs';
import { GUARDED, VENV, notebook } from './lib/jupyter.mjs';
import { story } from './lib/story.mjs';
import { openUsagePanel, parseUsageMemory, usagePanelLines } from './lib/usage.mjs';
import { join } from 'node:path';

const MiB = 2 ** 20;
const HOLD = 'held = b"x" * (300 << 20)\nprint("holding", len(held) >> 20, "MiB")';
// The plain kernel again, with JupyterHub's limit for the server in its env.
const HUB = { name: 'hub', display: 'Python 3 (hub)' };
const HUB_GUARDED = { name: 'hub-guarded', display: 'Python 3 (hub) (guarded)' };

const within = (lo, hi) => (b) => b >= lo * MiB && b <= hi * MiB;

story('memory figures: the kernel\'s own in the status bar, the panel, guardctl status, /metrics and Kernel Usage; MEM_LIMIT', {
  name: 'figures',
  resourceUsage: true,
  kernels: {
    [HUB.name]: {
      argv: [join(VENV, 'bin', 'python'), '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: HUB.display,
      language: 'python',
      env: { MEM_LIMIT: String(2 ** 30) },
    },
  },
  notebooks: {
    'holding.ipynb': notebook(GUARDED, [HOLD]),
    'hub.ipynb': notebook(HUB_GUARDED, ['x = 1']),
  },
}, async ({ server, page }) => {
  assert.equal(server.env.JUPYTER_GUARD_LIMIT, undefined, 'no limit is set');
  await openNotebook(page, server, 'holding.ipynb', GUARDED);
  await runCell(page, 0);
  await waitOutput(page, 0, 'holding 300 MiB');

  // The status bar: the kernel's own memory against the budget; the host's
  // (or a cgroup's) figure apart, named.
  const bar = await until('the status bar with the kernel holding its 300 MiB', async () => {
    const r = parseItem(await item(page).innerText());
    return r?.state === 'idle' && r.used >= 300 * MiB ? r : null;
  });
  console.log(`status bar: ${await item(page).innerText()}`);
  assert.ok(within(300, 360)(bar.used), `the status bar shows ${bar.used / MiB} MiB`);
  const scope = bar.from.match(/^(host|cgroup): ([\d.]+) (MiB|GiB|TiB) used$/);
  assert.ok(scope, `the budget's own figure is named apart: ${bar.from}`);

  // guardctl status, as a user runs it beside the server.
  const [listed] = guardctlStatus(server).filter((k) => k.notebook?.endsWith('holding.ipynb'));
  assert.ok(listed, 'guardctl status lists the notebook\'s kernel by its notebook');
  const m = listed.memory;
  assert.ok(within(300, 360)(m.kernel_bytes), `guardctl status: ${m.kernel_bytes / MiB} MiB`);
  assert.equal(m.scope, scope[1]);

  // The panel names the kernel by its notebook, with the same figures.
  await item(page).click();
  const row = page.locator(`#jupyter-guard-panel li[data-kernel-id="${listed.kernel_id}"]`);
  await row.waitFor();
  assert.equal(await row.locator('.jp-GuardPanel-notebook').innerText(), 'holding.ipynb');
  const inPanel = await readRow(row);
  assert.ok(within(300, 360)(inPanel.used), `the panel shows ${inPanel.used / MiB} MiB`);
  assert.match(inPanel.from, /^(host|cgroup): [\d.]+ (MiB|GiB|TiB) used$/);
  const drawn = await until('the picture', () => readChart(page.locator('#jupyter-guard-panel')));
  assert.ok(Math.abs(drawn.last - m.kernel_bytes) <= 0.1 * m.kernel_bytes, `the picture ends at ${drawn.last / MiB} MiB`);

  // jupyter_server's /metrics: the kernel's own figure, and the scope's apart.
  const metrics = await (await page.request.get(`${server.url}/metrics`)).text();
  const sample = (name, label) => {
    const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`kernel_id="${listed.kernel_id}"`) && l.includes(label));
    assert.ok(line, `/metrics has ${name}{${label}}`);
    return Number(line.split(' ').at(-1));
  };
  assert.ok(within(300, 360)(sample('jupyter_guard_memory_used_bytes', 'source="tree_rss"')));
  assert.ok(sample('jupyter_guard_memory_budget_used_bytes', `scope="${scope[1]}"`) > 0);

  // jupyter-resource-usage's Kernel Usage panel, for the notebook in front:
  // an answer it asked for now, once the panel shows it.
  const asked = page.waitForRequest((r) => new URL(r.url()).pathname.endsWith(`/kernel_usage/get_usage/${listed.kernel_id}`));
  await openUsagePanel(page);
  const reply = (await (await (await asked).response()).json()).content;
  const usage = await until('the Kernel Usage panel to show the answer', async () => {
    const lines = await usagePanelLines(page);
    const shown = lines.Memory ? parseUsageMemory(lines.Memory) : NaN;
    return Number(lines['Process ID']) === listed.kernel_pid && Math.abs(shown - reply.kernel_memory) < 0.01 * MiB ? shown : null;
  });
  console.log(`Kernel Usage: ${(usage / MiB).toFixed(1)} MiB; guardctl status: ${(m.kernel_bytes / MiB).toFixed(1)} MiB`);
  assert.ok(Math.abs(usage - m.kernel_bytes) <= 0.1 * m.kernel_bytes, `Kernel Usage shows ${usage / MiB} MiB`);

  // JupyterHub's MEM_LIMIT, in the kernel's environment: a 1 GiB budget from it.
  await openNotebook(page, server, 'hub.ipynb', HUB_GUARDED);
  const hub = await until('the status bar of the MEM_LIMIT kernel', async () => {
    const r = parseItem(await item(page).innerText());
    return r?.budget === 2 ** 30 ? r : null;
  });
  assert.equal(hub.from, 'MEM_LIMIT');
  assert.match(await item(page).getAttribute('title'), /budget from MEM_LIMIT/);
});
