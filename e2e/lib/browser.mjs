// Debian's Chromium, headless, driven by playwright-core, and the few things
// a user does and looks at in a notebook page: open a notebook, run a cell,
// read what appeared under it, press a toolbar button, read the kernel
// status. Elements are found the way a user finds them: the cell's output
// area, buttons by their title, the kernel status in the status bar.

import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

// Generous: the machine may be shared and slow; nothing here is a timed
// assertion, only the longest we wait for a state before calling it missing.
export const TIMEOUT = 90_000;

/** True for the only host the browser may talk to. */
const local = (url) => {
  const u = new URL(url);
  return u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:' || u.hostname === '127.0.0.1';
};

/**
 * Starts Chromium with a fresh profile. It talks to 127.0.0.1 only: every
 * other host name resolves to nothing, every other address goes to a proxy
 * that is not there, and the page's own requests elsewhere are aborted and
 * recorded in `blocked`.
 */
export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'guard-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--proxy-server=http://127.0.0.1:9',
      '--proxy-bypass-list=127.0.0.1',
    ],
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  context.setDefaultTimeout(TIMEOUT);
  const blocked = [];
  await context.route((url) => !local(url.href), (route) => {
    blocked.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? await context.newPage();
  await watchPage(page);
  return {
    context, page, blocked,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Records, from inside the page, every Jupyter dialog and toast that ever
 * opens and every kernel status the status bar shows, so a story can say
 * afterwards what the user was shown (a "Kernel Restarting" dialog that
 * came and went is caught too).
 */
async function watchPage(page) {
  await page.addInitScript(() => {
    const seen = { dialogs: [], toasts: [], statuses: [], indicator: [] };
    window.__e2eSeen = seen;
    const note = (list, text) => {
      text = (text || '').replace(/\s+/g, ' ').trim();
      if (text && list[list.length - 1] !== text) list.push(text);
    };
    const check = (records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n.nodeType !== 1) continue;
          if (n.matches('.jp-Dialog') || n.querySelector?.('.jp-Dialog')) {
            // Its text arrives a moment later; read it then.
            setTimeout(() => note(seen.dialogs, n.innerText || 'a dialog'), 50);
          }
          if (n.matches('.Toastify__toast') || n.querySelector?.('.Toastify__toast')) {
            setTimeout(() => note(seen.toasts, n.innerText || 'a toast'), 50);
          }
        }
      }
      // "Python 3 (guarded) | Idle": the kernel status users read in the status bar.
      for (const el of document.querySelectorAll('.jp-StatusBar-TextItem')) {
        if (el.textContent.includes(' | ')) note(seen.statuses, el.textContent);
      }
      // The toolbar's kernel name and status circle (Notebook 7 has no status bar).
      for (const el of document.querySelectorAll('.jp-NotebookPanel-toolbar')) {
        const name = el.querySelector('.jp-Toolbar-kernelName')?.textContent;
        const ind = el.querySelector('.jp-Notebook-ExecutionIndicator');
        const st = el.querySelector('.jp-Toolbar-kernelStatus, .jp-KernelStatus');
        note(seen.indicator, `${name} ${ind?.getAttribute('data-status')} ${ind?.getAttribute('title') || ''} ${st?.getAttribute('title') || ''}`);
      }
    };
    new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['data-status', 'title'] });
  });
}

/** What the page has shown since the notebook's kernel was ready: { dialogs, toasts, statuses, indicator }. */
export function seen(page) {
  return page.evaluate(() => window.__e2eSeen);
}

/** Forgets what the page showed so far. */
function forget(page) {
  return page.evaluate(() => {
    for (const list of Object.values(window.__e2eSeen)) list.length = 0;
  });
}

/** The notebook panel now in front (JupyterLab and Notebook 7 alike). */
export function notebookPanel(page) {
  return page.locator('.jp-NotebookPanel:visible').first();
}

/** The status bar's kernel status, "Python 3 (guarded) | Idle", in JupyterLab. */
export function kernelStatus(page) {
  return page.locator('.jp-StatusBar-TextItem', { hasText: ' | ' }).first();
}

/** The notebook toolbar's execution indicator (Lab and Notebook 7): data-status is idle/busy/... */
export function executionIndicator(page) {
  return notebookPanel(page).locator('.jp-Notebook-ExecutionIndicator').first();
}

/** Waits until the toolbar's kernel indicator says idle. */
export async function waitIdle(page, timeout = TIMEOUT) {
  await notebookPanel(page).locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first().waitFor({ state: 'attached', timeout });
}

/**
 * Opens a notebook file from the server's root in JupyterLab (`lab`) or
 * Notebook 7 (`notebook`), and waits until its kernel (kernel: { display })
 * is connected and idle.
 */
export async function openNotebook(page, server, file, kernel, ui = 'lab') {
  const path = ui === 'lab' ? `/lab/tree/${file}?reset` : `/notebooks/${file}`;
  await page.goto(server.url + path);
  await notebookPanel(page).locator('.jp-Cell').first().waitFor();
  // The toolbar names the kernel as soon as it is chosen, and its status
  // circle reads initializing, connecting, unknown, busy, then idle: the
  // kernel answered. Before that it reads idle next to "No Kernel", and a
  // look at the toolbar alone once took that moment for the end (Notebook 7:
  // the story then saw the start's "unknown"). So the wait reads what the
  // page recorded: the kernel's name with a starting status, then idle.
  await page.waitForFunction((name) => {
    const ind = window.__e2eSeen.indicator;
    const last = ind.length - 1;
    return ind[last]?.startsWith(`${name} idle`)
      && ind.slice(0, last).some((s) => s.startsWith(`${name} `) && !s.startsWith(`${name} idle`));
  }, kernel.display, { timeout: TIMEOUT });
  if (ui === 'lab') {
    // Room for the outputs: fold the file browser away, as users do.
    const sidebar = page.locator('#jp-left-stack');
    if (await sidebar.isVisible()) {
      await page.locator('.jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current').first().click();
      await sidebar.waitFor({ state: 'hidden' });
    }
  }
  // What a story checks it showed (no dialogs, no dead kernel) starts here;
  // the statuses a kernel passes through while starting are not its business.
  await forget(page);
}

/** The i-th cell (0-based) of the notebook in front. */
export function cell(page, i) {
  return notebookPanel(page).locator('.jp-Notebook .jp-Cell').nth(i);
}

/** The rendered outputs under the i-th cell. */
export function outputs(page, i) {
  return cell(page, i).locator('.jp-OutputArea-output');
}

/** The output under cell i that contains text, once it appears. */
export async function waitOutput(page, i, text, timeout = TIMEOUT) {
  const out = outputs(page, i).filter({ hasText: text }).first();
  await out.waitFor({ timeout });
  return out;
}

/** Runs cell i as a user does: click into it, Shift+Enter. */
export async function runCell(page, i) {
  const c = cell(page, i);
  await c.locator('.jp-InputArea-editor').click();
  await page.keyboard.press('Shift+Enter');
}

/** The input prompt of cell i: "[*]:" while it runs, "[3]:" once done. */
export function prompt(page, i) {
  return cell(page, i).locator('.jp-InputPrompt').first();
}

/** Waits until cell i has run: its prompt shows an execution count. */
export async function waitRan(page, i, timeout = TIMEOUT) {
  await cell(page, i).locator('.jp-InputPrompt', { hasText: /\[\d+\]/ }).first().waitFor({ timeout });
}

/**
 * What cell i shows under it: for each output, its MIME type and its text
 * as rendered (what a user reads).
 */
export async function renderedOutputs(page, i) {
  // Only what is on the page: a finished input() leaves its prompt widget hidden there.
  return outputs(page, i).evaluateAll((els) => els.filter((el) => el.checkVisibility()).map((el) => ({
    mime: el.getAttribute('data-mime-type'),
    text: el.innerText.replace(/\s+$/, ''),
  })));
}

/** A toolbar button of the notebook in front, by the title users hover. */
export function toolbarButton(page, title) {
  return notebookPanel(page).locator(`.jp-Toolbar [title="${title}"]`).first();
}

/** Polls fn until it returns something truthy. */
export async function until(what, fn, timeout = TIMEOUT) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Saves a screenshot of the page; returns its path. */
export async function screenshot(page, path) {
  mkdirSync(join(path, '..'), { recursive: true });
  await page.screenshot({ path });
  return path;
}

/** Drags the right side bar's edge 150 px left, so the panel's lines do not wrap. */
export async function widenRightSidebar(page) {
  const edge = await page.locator('#jp-main-split-panel > .lm-SplitPanel-handle:visible').last().boundingBox();
  const x = edge.x + edge.width / 2;
  const y = edge.y + edge.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x - 150, y, { steps: 5 });
  await page.mouse.up();
}
