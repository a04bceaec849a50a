// One story = one node:test test with its own JupyterLab server (private
// root and Jupyter dirs, guarded kernelspec installed by guardctl) and its
// own fresh Chromium. When a story fails, the error carries what the page
// showed and the end of the server's log (which holds the guard's log), and
// the page is saved as bin/e2e/<story>/failure.png.

import { test } from 'node:test';
import { join } from 'node:path';
import { launchBrowser, screenshot, seen } from './browser.mjs';
import { REPO, startJupyter } from './jupyter.mjs';

// The stories' screenshots go to bin/e2e/screenshots, so a test run leaves
// the tree clean; `make screenshots` (E2E_SCREENSHOTS=docs/screenshots)
// refreshes the ones the README shows.
export const SCREENSHOTS = process.env.E2E_SCREENSHOTS
  ? join(REPO, process.env.E2E_SCREENSHOTS)
  : join(REPO, 'bin', 'e2e', 'screenshots');

/**
 * Declares a test named title that runs body({ server, page, browser }).
 * setup: { name, env, notebooks } for startJupyter.
 */
export function story(title, setup, body) {
  test(title, { timeout: 240_000 }, async (t) => {
    const server = await startJupyter(setup);
    let browser;
    try {
      browser = await launchBrowser();
      await body({ t, server, browser, page: browser.page });
      if (browser.blocked.length) {
        throw new Error(`the page asked for hosts other than 127.0.0.1: ${browser.blocked.join(', ')}`);
      }
    } catch (err) {
      let extra = '';
      if (browser) {
        try {
          const shot = await screenshot(browser.page, join(server.artifacts, 'failure.png'));
          extra += `\n--- the page when it failed: ${shot}`;
          extra += `\n--- the page showed: ${JSON.stringify(await seen(browser.page))}`;
        } catch (e) {
          extra += `\n--- (no screenshot: ${e.message})`;
        }
      }
      const log = server.log().split('\n').slice(-60).join('\n');
      extra += `\n--- the last lines of ${server.logPath}:\n${log}`;
      // node:test prints the stack, which holds the message as it was when made.
      err.message += extra;
      if (typeof err.stack === 'string') err.stack += extra;
      throw err;
    } finally {
      // The server first: once a page has gone, jupyter_server 2.21 takes
      // 30 s or more to shut a kernel down whose websocket it is buffering.
      await server.stop();
      if (browser) await browser.close();
    }
  });
}
