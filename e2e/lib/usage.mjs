// jupyter-resource-usage's Kernel Usage panel, as a user opens and reads it.

import assert from 'node:assert/strict';

/** The Kernel Usage panel. */
export const usagePanel = (page) => page.locator('#kernelusage-panel-id');

/** Opens the Kernel Usage panel as a user does: its tab (a gauge) in the right side bar. */
export async function openUsagePanel(page) {
  if (!await usagePanel(page).isVisible()) {
    await page.locator('.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="kernelusage-panel-id"]').click();
  }
  await usagePanel(page).waitFor();
}

/** The panel's "Label: value" lines, as { label: value }. */
export async function usagePanelLines(page) {
  const lines = await usagePanel(page).locator('.jp-KernelUsage-separator').allInnerTexts();
  return Object.fromEntries(lines.filter((l) => l.includes(':')).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i), l.slice(i + 1).trim()];
  }));
}

/** "270.12 MB" as the panel's formatter writes it (binary units, two decimals), in bytes. */
export function parseUsageMemory(text) {
  const m = text?.match(/^([\d.]+) (B|KB|MB|GB)$/);
  assert.ok(m, `the panel's memory reads ${JSON.stringify(text)}`);
  return Number(m[1]) * { B: 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30 }[m[2]];
}
