// Story 4, in JupyterLab and Notebook 7: the guard where users look, with jupyter-guard's
// lab and server extensions installed (as the wheel installs them). A cell
// grows memory under a small JUPYTER_GUARD_LIMIT. JupyterLab's status bar
// (in Notebook 7, which has none, the panel opened from the Kernel menu)
// shows the notebook's kernel's memory against the budget, rising while the
// cell grows, then PAUSED when the guard pauses it. Clicking that item opens
// the guarded kernels panel, which names the kernel by its notebook and
// draws its memory: the picture rises while the cell grows, stays flat
// while the kernel is paused, marks the cells, and its last point is what
// guardctl status says. Its Resume lets the cell go on (the guard pauses it
// again further on), and its Interrupt ends the cell with KeyboardInterrupt
// and the kernel's variables kept. jupyter_server's /metrics carries the
// kernel's figures.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ARTIFACTS, GUARDED, notebook } from './lib/jupyter.mjs';
import { statFields } from './lib/proc.mjs';
import { openNotebook, runCell, seen, until, waitOutput, widenRightSidebar } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';
import { GROW, KEPT, LIMIT, interruptedOutput } from './lib/memory.mjs';
import { guardctlStatus, item, parseItem, readChart, readRow } from './lib/guard.mjs';

const MiB = 2 ** 20;

const CELLS = [KEPT, GROW, 'print(kept, len(chunks) > 0)'];

const IDLE_WINDOW = 20_000;

/** CPU time of a process and its reaped children (the guardctl runs), in seconds. */
function cpuSeconds(pid) {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100; // clock ticks: 100 a second on Linux
}

/** What the server extension says of every guarded kernel (guardctl status --json). */
async function guarded(page, server) {
  const resp = await page.request.get(`${server.url}/jupyter-guard/kernels`);
  assert.equal(resp.status(), 200, await resp.text());
  return resp.json();
}

for (const ui of ['lab', 'notebook']) {
  const lab = ui === 'lab';
  const title = lab
    ? 'extension (JupyterLab): memory / budget and PAUSED in the status bar, Resume and Interrupt in the panel'
    : 'extension (Notebook 7): Kernel > Show Guarded Kernels, memory / budget and PAUSED in the panel, Resume and Interrupt there';
  story(title, {
    name: `extension-${ui}`,
    // Resume, then a second pause: the guard without the allocation
    // ceiling. With it, Resume runs on to the ceiling, where the cell ends
    // with MemoryError (tests/test_ceiling.py).
    env: { JUPYTER_GUARD_LIMIT: LIMIT, JUPYTER_GUARD_CEILING: 'off' },
    notebooks: { 'grow.ipynb': notebook(GUARDED, CELLS) },
  }, async ({ server, page }) => {
    // The extension's own requests, to check how often it polls.
    // An action (Resume, Interrupt) is followed at once by a fresh look,
    // on purpose: those are not counted as polls.
    const polls = [];
    const actions = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.endsWith('/jupyter-guard/kernels')) polls.push(Date.now());
      if (/\/jupyter-guard\/kernels\/[^/]+\/(resume|interrupt|restart)$/.test(path)) actions.push(Date.now());
    });

    await openNotebook(page, server, 'grow.ipynb', GUARDED, ui);
    const [kernel] = await guarded(page, server);
    assert.ok(kernel, 'the server extension lists the notebook\'s kernel');
    const panel = page.locator('#jupyter-guard-panel');
    const row = panel.locator(`li[data-kernel-id="${kernel.kernel_id}"]`);

    // What shows the kernel's figures: the status-bar item in JupyterLab;
    // in Notebook 7, which has no status bar, the panel from the Kernel menu.
    let read;
    if (lab) {
      read = async () => parseItem(await item(page).innerText());
    } else {
      assert.equal(await item(page).count(), 0, 'Notebook 7 has no status bar');
      await page.getByRole('menuitem', { name: 'Kernel', exact: true }).click();
      await page.getByRole('menuitem', { name: 'Show Guarded Kernels' }).click();
      await row.waitFor();
      read = () => readRow(row);
    }

    // The idle kernel's memory against the 600 MiB budget.
    const idle = await until('the idle kernel\'s figures', async () => {
      const r = await read();
      return r?.state === 'idle' ? r : null;
    });
    assert.equal(idle.budget, 600 * MiB);
    assert.equal(idle.from, 'JUPYTER_GUARD_LIMIT');
    assert.ok(idle.used > 10 * MiB && idle.used < 300 * MiB, `an idle kernel uses ${idle.used / MiB} MiB`);
    if (lab) {
      assert.match(await item(page).getAttribute('title'), /budget from JUPYTER_GUARD_LIMIT/);
      // The item opens the panel; wider, its picture is easier to read.
      await item(page).click();
      await row.waitFor();
      await widenRightSidebar(page);
    }
    // The panel names the kernel by its notebook.
    assert.equal(await row.locator('.jp-GuardPanel-notebook').innerText(), 'grow.ipynb');

    await runCell(page, 0);
    await waitOutput(page, 0, 'defined before the big cell');

    // While the cell grows, the figure rises, and the state is busy; and
    // so does the panel's picture.
    await runCell(page, 1);
    const readings = [];
    const drawn = [];
    await until('PAUSED', async () => {
      const r = await read();
      if (r && r.state === 'busy' && readings.at(-1)?.used !== r.used) readings.push(r);
      if (r?.state === 'busy') {
        const c = await readChart(panel);
        if (c && drawn.at(-1)?.last !== c.last) drawn.push(c);
      }
      return r?.state === 'PAUSED';
    });
    const rising = readings.filter((r) => r.used > idle.used + 20 * MiB);
    assert.ok(rising.length >= 2, `the memory was seen rising while busy: ${JSON.stringify(readings)}`);
    assert.ok(rising.every((r, i) => i === 0 || r.used >= rising[i - 1].used), JSON.stringify(rising));
    const climbing = drawn.filter((c) => c.last > idle.used + 20 * MiB).map((c) => c.last);
    assert.ok(climbing.length >= 2 && climbing.every((v, i) => i === 0 || v >= climbing[i - 1]),
      `the picture's last point rose while the cell grew: ${JSON.stringify(drawn.map((c) => c.last / MiB))}`);

    // Paused: it says so plainly, near the budget, while the notebook's own
    // kernel status still says busy; the cell shows the pause notice.
    const notice = await waitOutput(page, 1, 'jupyter-guard paused the kernel before it ran out of memory.');
    // The notice names the panel's buttons, since the server has the extension.
    assert.match(await notice.innerText(), /Choose one \(buttons in the Guarded Kernels panel: Kernel > Show Guarded Kernels, or click Guard in the status bar\):/);
    assert.match(await notice.innerText(), /Resume \(the panel, or guardctl resume\): continue anyway; jupyter-guard pauses it again at /);
    assert.ok((await read()).used >= 0.9 * 600 * MiB);
    if (lab) {
      assert.match(await item(page).innerText(), /^Guard: .* · PAUSED$/);
      assert.equal(await item(page).getAttribute('data-state'), 'paused');
      await page.locator('.jp-StatusBar-Widget').screenshot({ path: join(SCREENSHOTS, 'extension-statusbar.png') });
    }
    await row.locator('.jp-GuardPanel-state', { hasText: 'PAUSED' }).waitFor();

    // Paused, the picture stays flat at the pause, marks the cells with
    // their numbers (and what the finished one added), draws the lines, and
    // its last point is what guardctl status says.
    const atPause = await until('the picture at the pause', async () => {
      const c = await readChart(panel);
      return c && c.last >= 0.9 * 600 * MiB ? c : null;
    });
    await sleep(4000);
    const later = await until('the picture to be drawn again', async () => {
      const c = await readChart(panel);
      return c && c.at > atPause.at ? c : null;
    });
    assert.ok(Math.abs(later.last - atPause.last) <= 0.02 * atPause.last,
      `paused, the picture moved: ${atPause.last / MiB} then ${later.last / MiB} MiB`);
    const marked = later.cells.map((c) => c.label);
    assert.ok(later.cells.some((c) => c.n === 1) && later.cells.some((c) => c.n === 2), `cells marked: ${JSON.stringify(later.cells)}`);
    assert.ok(marked.includes('[2]'), `the growing cell is labelled: ${JSON.stringify(marked)}`);
    assert.deepEqual(later.lines, [600 * MiB, 570 * MiB, 480 * MiB], 'the budget, pause and warning lines');
    const [listed] = guardctlStatus(server).filter((k) => k.kernel_id === kernel.kernel_id);
    const chartNow = (await readChart(panel)).last;
    assert.ok(Math.abs(chartNow - listed.memory.kernel_bytes) <= 0.1 * listed.memory.kernel_bytes,
      `the picture ends at ${chartNow / MiB} MiB, guardctl status says ${listed.memory.kernel_bytes / MiB} MiB`);
    const resume = row.getByRole('button', { name: 'Resume', exact: true });
    assert.ok(await resume.isEnabled(), 'Resume is enabled for the paused kernel');
    // The ledger of the selected kernel shows the running cell.
    await panel.locator('.jp-GuardPanel-cells tr', { hasText: 'running' }).first().waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, `extension-panel${lab ? '' : '-notebook7'}.png`) });

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
    if (lab) await item(page).filter({ hasText: /· PAUSED$/ }).waitFor();
    if (lab) {
      // The picture after a pause, a resume and the second pause (README).
      await row.locator('.jp-GuardPanel-state', { hasText: 'PAUSED' }).waitFor();
      await until('the second pause drawn', async () => {
        const c = await readChart(panel);
        return c && c.last >= again.memory.kernel_bytes * 0.95 ? c : null;
      });
      await panel.screenshot({ path: join(SCREENSHOTS, 'extension-memory-chart.png') });
    }

    // Interrupt from the panel ends the cell; the kernel keeps its variables.
    await row.locator('.jp-GuardPanel-state', { hasText: 'PAUSED' }).waitFor();
    await row.getByRole('button', { name: 'Interrupt', exact: true }).click();
    assert.deepEqual(await interruptedOutput(page, 1), [], 'the cell did not finish');
    await runCell(page, 2);
    await waitOutput(page, 2, 'defined before the big cell True');
    if (lab) await item(page).filter({ hasText: /· idle$/ }).waitFor();
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
    assert.ok(sample('jupyter_guard_memory_used_bytes', 'source="tree_rss"') > 500 * MiB, 'the kernel holds what the cell grew');
    assert.equal(sample('jupyter_guard_memory_budget_used_bytes', 'scope="kernel"'),
      sample('jupyter_guard_memory_used_bytes'), 'JUPYTER_GUARD_LIMIT counts the kernel\'s own memory');
    assert.ok(sample('jupyter_guard_pauses_total') >= 2);
    assert.equal(sample('jupyter_guard_state', 'state="idle"'), 1);
    assert.equal(sample('jupyter_guard_deaths_total', 'cause="segfault"'), 0);

    // It polled, and, the status-bar item and the panel together, no more
    // than once a second (a margin for timers firing late).
    // JupyterLab: the item every second while the cell runs; Notebook 7: the
    // panel every 2 s.
    assert.ok(polls.length >= (lab ? 10 : 5), `the extension asked the server ${polls.length} times`);
    const gaps = polls.slice(1).map((t, i) => t - polls[i])
      .filter((_, i) => !actions.some((a) => a <= polls[i + 1] && polls[i + 1] - a < 1500));
    assert.deepEqual(gaps.filter((g) => g < 900), [], 'gaps between polls shorter than a second (ms)');

    // Idle, with the panel open: what the server spends, the guardctl runs
    // it waits for included, stays under 1 % of a CPU.
    if (lab) {
      const before = cpuSeconds(server.proc.pid);
      const t0 = Date.now();
      await sleep(IDLE_WINDOW);
      const share = (cpuSeconds(server.proc.pid) - before) / ((Date.now() - t0) / 1000);
      console.log(`jupyter server's CPU while idle with the panel open: ${(share * 100).toFixed(2)} %`);
      assert.ok(share < 0.01, `the server used ${(share * 100).toFixed(2)} % of a CPU while idle`);
    }

    const shown = await seen(page);
    assert.deepEqual(shown.dialogs, [], 'no dialog opened');
  });
}

// The GPU: a kernel that holds GPU memory shows it in the status bar. There
// is no GPU here: the server's kernels run under guardctl-nvmlmock (make
// test builds it), whose NVML is go-nvml's mock reading the GPUs' processes
// from the file JUPYTER_GUARD_NVMLMOCK names, which the story writes with
// the kernel's real pid. Then Restart in the panel gives a new kernel, which
// holds no GPU memory.
const GPU_HELD = 3 * 2 ** 30;
// In the story's artifacts dir, which its server makes afresh.
const GPUS = join(ARTIFACTS, 'extension-gpu', 'gpus.json');

story('extension (JupyterLab): GPU memory in the status bar, and Restart in the panel', {
  name: 'extension-gpu',
  env: { JUPYTER_GUARD_LIMIT: LIMIT, JUPYTER_GUARD_NVMLMOCK: GPUS },
  guardctl: 'guardctl-nvmlmock',
  notebooks: { 'gpu.ipynb': notebook(GUARDED, ['x = 1', 'print(x)']) },
}, async ({ server, page }) => {
  await openNotebook(page, server, 'gpu.ipynb', GUARDED);
  const [kernel] = await guarded(page, server);
  assert.ok(kernel?.kernel_pid, `the server extension lists the kernel: ${JSON.stringify(kernel)}`);
  writeFileSync(GPUS, JSON.stringify({ gpus: [{ index: 0, processes: [{ pid: kernel.kernel_pid, used_bytes: GPU_HELD }] }] }));

  // A cell's end measurement reads the GPUs.
  await runCell(page, 0);
  const withGPU = await until('the GPU memory in the status bar', async () => {
    const r = parseItem(await item(page).innerText());
    return r?.gpu && r.state === 'idle' ? r : null;
  });
  assert.equal(withGPU.gpu, GPU_HELD);
  assert.match(await item(page).getAttribute('title'), /GPU 0 \(Mock NVIDIA A100-SXM4-80GB\)/);
  await page.locator('.jp-StatusBar-Widget').screenshot({ path: join(SCREENSHOTS, 'extension-statusbar-gpu.png') });

  // Restart from the panel, after its confirmation: a new kernel process,
  // which the mock's GPU does not list.
  await item(page).click();
  const row = page.locator(`#jupyter-guard-panel li[data-kernel-id="${kernel.kernel_id}"]`);
  await row.getByRole('button', { name: 'Restart', exact: true }).click();
  await page.locator('.jp-Dialog').getByRole('button', { name: 'Restart', exact: true }).click();
  const restarted = await until('the kernel back idle with a new process', async () => {
    const [k] = await guarded(page, server);
    return k?.state === 'idle' && k.kernel_pid && k.kernel_pid !== kernel.kernel_pid ? k : null;
  });
  assert.equal(restarted.kernel_id, kernel.kernel_id, 'the same kernel, restarted behind the proxy');
  await runCell(page, 1);
  await until('no GPU memory for the new kernel', async () => {
    const r = parseItem(await item(page).innerText());
    return r?.state === 'idle' && r.gpu === null;
  });
  // The restart lost x, as a restart does.
  await waitOutput(page, 1, "NameError: name 'x' is not defined");
  assert.equal(await page.locator('.jp-Dialog').count(), 0, 'the confirmation closed');
});
