// Story 5, in JupyterLab: jupyter-resource-usage's Kernel Usage panel
// (loaded by this story's server only) shows figures for every guarded
// kernel: the proxy answers its usage_request, for xeus-python, which
// cannot, as for ipykernel and bash_kernel (built on ipykernel's base
// class), which could. For each of the three a cell runs, then the panel,
// opened from its tab in the right side bar, shows the kernel's process, a
// child of guardctl, and its memory: the RSS of its whole process tree,
// within 10 % of what /proc says at that moment. The answer the page got
// carries the guard's own figures, so it is the proxy's, not the kernel's.
// Plain xeus-python, as a control, gets no answer: the panel says it timed
// out.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { GUARDED, REPO, notebook } from './lib/jupyter.mjs';
import { exeOf, parentOf, treeRss } from './lib/proc.mjs';
import { openNotebook, runCell, screenshot, until, waitOutput, widenRightSidebar } from './lib/browser.mjs';
import { SCREENSHOTS, story } from './lib/story.mjs';
import { openUsagePanel as openPanel, parseUsageMemory as parseMemory, usagePanel as panel, usagePanelLines as panelLines } from './lib/usage.mjs';

const MiB = 2 ** 20;

// The plain kernelspecs of xeus-python and bash_kernel from .venv-kernels,
// as tests/test_other_kernels_guarded.py writes them.
const KERNELS_PYTHON = join(REPO, '.venv-kernels', 'bin', 'python');
const KERNELS = {
  xpython: {
    argv: [KERNELS_PYTHON, '-m', 'xpython_launcher', '-f', '{connection_file}'],
    display_name: 'Python (XPython)',
    language: 'python',
  },
  bash: {
    argv: [KERNELS_PYTHON, '-m', 'bash_kernel', '-f', '{connection_file}'],
    display_name: 'Bash',
    language: 'bash',
    env: { PS1: '$' },
  },
};
const XPYTHON = { name: 'xpython', display: KERNELS.xpython.display_name };
const guarded = (name) => ({
  name: `${name}-guarded`, display: `${KERNELS[name].display_name} (guarded)`, language: KERNELS[name].language,
});

/** A Python cell that holds mib MiB, written so they count in RSS. */
const hold = (mib) => `held = b"x" * (${mib} << 20)\nprint("holding", len(held) >> 20, "MiB")`;

// Each guarded kernel: its notebook's one cell, what the cell prints, and
// the least the panel must then show.
const CASES = [
  { file: 'ipykernel.ipynb', kernel: GUARDED, source: hold(200), prints: 'holding 200 MiB', atLeast: 200 * MiB },
  { file: 'xpython.ipynb', kernel: guarded('xpython'), source: hold(150), prints: 'holding 150 MiB', atLeast: 150 * MiB,
    shot: 'kernel-usage.png' },
  { file: 'bash.ipynb', kernel: guarded('bash'), source: 'echo hello from bash', prints: 'hello from bash', atLeast: 10 * MiB },
];
const CONTROL = { file: 'plain-xpython.ipynb', kernel: XPYTHON, source: 'print("hello from xeus-python")', prints: 'hello from xeus-python' };

/** The kernel of the notebook file, as the server's sessions name it. */
async function kernelOf(page, server, file) {
  const sessions = await (await page.request.get(`${server.url}/api/sessions`)).json();
  const session = sessions.find((s) => s.path === file);
  assert.ok(session, `no session for ${file}: ${JSON.stringify(sessions)}`);
  return session.kernel.id;
}

story('kernel usage panel: figures for guarded ipykernel, xeus-python and bash_kernel, the memory their tree\'s RSS', {
  name: 'usage',
  // A budget of its own, as tests/test_usage.py gives: the guard then counts
  // the tree's RSS, the figure the panel shows (its status-bar item agrees).
  env: { JUPYTER_GUARD_LIMIT: '2GiB' },
  resourceUsage: true,
  kernels: KERNELS,
  notebooks: Object.fromEntries([...CASES, CONTROL].map((c) => [c.file, notebook(c.kernel, [c.source])])),
}, async ({ server, page }) => {
  /** Opens c's notebook and runs its cell; returns the notebook's kernel id. */
  const run = async (c) => {
    await openNotebook(page, server, c.file, c.kernel);
    await runCell(page, 0);
    await waitOutput(page, 0, c.prints);
    return kernelOf(page, server, c.file);
  };

  for (const c of CASES) {
    const kernelId = await run(c);

    // The panel asks the server when its notebook comes in front, then
    // every 5 s while shown: wait for an answer asked for after the cell.
    const asked = page.waitForRequest((r) => new URL(r.url()).pathname.endsWith(`/api/metrics/v1/kernel_usage/get_usage/${kernelId}`));
    await openPanel(page);
    const reply = (await (await (await asked).response()).json()).content;
    assert.ok(reply.pid, `${c.kernel.display}: the panel's server had no usage_reply: ${JSON.stringify(reply)}`);
    // Only the proxy's answer has the guard's figures: a kernel that answers
    // itself (ipykernel) must not have been asked.
    assert.ok(reply.jupyter_guard, `${c.kernel.display}: the usage_reply is not the proxy's: ${JSON.stringify(reply)}`);
    assert.equal(reply.jupyter_guard.used_bytes, reply.kernel_memory, 'the budget counts the memory the panel shows');

    // What the user reads once the panel shows that answer.
    const shown = await until(`${c.kernel.display}: the panel to show the answer`, async () => {
      const lines = await panelLines(page);
      return Number(lines['Process ID']) === reply.pid && Math.abs(parseMemory(lines.Memory) - reply.kernel_memory) < 0.01 * MiB
        ? lines : null;
    });
    const rss = treeRss(reply.pid);
    const memory = parseMemory(shown.Memory);
    console.log(`${c.kernel.display}: the panel shows Memory: ${shown.Memory} (${(memory / MiB).toFixed(1)} MiB) for process ${reply.pid}; /proc: its tree holds ${(rss / MiB).toFixed(1)} MiB`);
    assert.equal(exeOf(parentOf(reply.pid)), server.guardctl, `${c.kernel.display}: process ${reply.pid} is not guardctl's child`);
    assert.ok(memory >= c.atLeast, `${c.kernel.display}: the panel shows ${shown.Memory}`);
    assert.ok(Math.abs(memory - rss) <= 0.1 * rss,
      `${c.kernel.display}: the panel shows ${shown.Memory}, /proc says the kernel's tree holds ${(rss / MiB).toFixed(1)} MiB`);
    if (c.shot) {
      await widenRightSidebar(page);
      await screenshot(page, join(SCREENSHOTS, c.shot));
    }
  }

  // Plain xeus-python does not answer: after 10 s the panel's server gives
  // up, and the panel says so.
  await run(CONTROL);
  await openPanel(page);
  await panel(page).getByText('Timed out in: 10000 ms').waitFor();
  await panel(page).getByText('Usage data is missing').waitFor();
});
