// What jupyter-guard's lab extension shows, read as a user reads it: the
// status-bar item, a kernel's row in the guarded kernels panel, the
// picture of its memory; and guardctl status beside the story's server.

import { execFileSync } from 'node:child_process';

const MiB = 2 ** 20;

/** The status-bar item of jupyter-guard. */
export const item = (page) => page.locator('.jp-GuardStatus');

/**
 * "Guard: 412 MiB / 600 MiB (JUPYTER_GUARD_LIMIT) · busy", or with "· GPU 3
 * GiB" before the state, read as { used (bytes), budget, from, gpu (bytes
 * or null), state }.
 */
export function parseItem(text) {
  const m = text.match(/^Guard: ([\d.]+) (B|KiB|MiB|GiB) \/ ([\d.]+) (MiB|GiB|TiB) \(([^)]+)\)(?: · GPU ([\d.]+) (B|KiB|MiB|GiB))? · (\S+)$/);
  if (!m) return null;
  const scale = { B: 1, KiB: 2 ** 10, MiB, GiB: 2 ** 30, TiB: 2 ** 40 };
  return {
    used: Number(m[1]) * scale[m[2]],
    budget: Number(m[3]) * scale[m[4]],
    from: m[5],
    gpu: m[6] === undefined ? null : Number(m[6]) * scale[m[7]],
    state: m[8],
  };
}

/** The picture of the selected kernel's memory in the panel, as what it draws. */
export async function readChart(panel) {
  const svg = panel.locator('.jp-GuardPanel-chart svg');
  if (await svg.count() === 0) return null;
  const data = await svg.evaluate((e) => ({ ...e.dataset }));
  if (data.lastKernel === undefined) return null;
  const cells = await svg.locator('g.jp-GuardChart-cell').evaluateAll((gs) => gs.map((g) => ({
    n: Number(g.dataset.cell), label: g.querySelector('text')?.textContent ?? null,
  })));
  const lines = await svg.locator('line[data-bytes]').evaluateAll((ls) => ls.map((l) => Number(l.dataset.bytes)));
  return { last: Number(data.lastKernel), at: Number(data.lastTime), points: Number(data.points), cells, lines };
}

/** guardctl status --json, as a user runs it beside the story's server. */
export function guardctlStatus(server) {
  return JSON.parse(execFileSync(server.guardctl, ['status', '--json'], { env: server.env, encoding: 'utf8' }));
}

/** The panel's figures of one kernel: "570 MiB / 600 MiB (JUPYTER_GUARD_LIMIT)" as parseItem's. */
export async function readRow(row) {
  const [mem, from, state] = await Promise.all(['memory', 'source', 'state'].map((c) => row.locator(`.jp-GuardPanel-${c}`).innerText()));
  return parseItem(`Guard: ${mem}${from} · ${state}`);
}
