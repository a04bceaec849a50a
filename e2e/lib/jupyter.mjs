// Starts and stops a private JupyterLab server for one story: a fresh root
// directory for the notebooks, private Jupyter directories (data, path,
// runtime, config, IPython) so the user's own kernelspecs, settings and
// workspaces neither leak in nor get touched, and the guarded kernelspec
// installed there by the project's own `guardctl install`, as a user would.

import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { processesMentioning } from './proc.mjs';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const VENV = join(REPO, '.venv');
// Where logs and failure screenshots go: bin/ is ignored by git.
export const ARTIFACTS = join(REPO, 'bin', 'e2e');

// The kernelspecs every story's server has: the plain kernel as users have
// it, and its guarded form written by guardctl install.
export const PLAIN = { name: 'e2e-python3', display: 'Python 3' };
export const GUARDED = { name: 'e2e-python3-guarded', display: 'Python 3 (guarded)' };

// jupyter-guard's lab extension as `make labextension` builds it.
export const LABEXTENSION = join(REPO, 'labextension', 'prebuilt', 'jupyter-guard');
// jupyter-resource-usage as `make e2e-deps` installs it (pip --target).
export const RESOURCE_USAGE = join(REPO, 'bin', 'resource-usage');

const START_TIMEOUT = 120_000;
const STOP_TIMEOUT = 30_000;

/**
 * The guardctl under test: $JUPYTER_GUARD_BIN, else bin/guardctl (make e2e
 * builds it); or another build in bin/ when a story names one.
 */
export function guardctlPath(build = null) {
  const p = resolve(build ? join(REPO, 'bin', build) : process.env.JUPYTER_GUARD_BIN || join(REPO, 'bin', 'guardctl'));
  if (!existsSync(p)) {
    throw new Error(`${p} is missing: run 'make build' (or set JUPYTER_GUARD_BIN)`);
  }
  return realpathSync(p); // as guardctl install writes it into kernel.json
}

/** A port nobody listens on now, on 127.0.0.1. */
export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/**
 * Starts `jupyter lab` from .venv on 127.0.0.1 with no token.
 *
 * name: the story's name, for the logs (bin/e2e/<name>/).
 * env: extra environment for the server, which its kernels inherit
 *      (e.g. { JUPYTER_GUARD_LIMIT: '600MiB' }).
 * notebooks: { 'file.ipynb': nbformat JSON } written into the root dir.
 * guardctl: another build of guardctl in bin/ to install and run
 *      (e.g. 'guardctl-nvmlmock', whose GPUs are go-nvml's mock).
 * kernels: { name: kernel.json } more plain kernelspecs, written beside the
 *      plain Python one and guarded with it (as "<display_name> (guarded)").
 * resourceUsage: also load jupyter-resource-usage (its kernel usage panel).
 *
 * Returns { url, root, env, log, stop() }.
 */
export async function startJupyter({ name, env = {}, notebooks = {}, guardctl: build = null, kernels = {}, resourceUsage = false }) {
  const python = join(VENV, 'bin', 'python');
  if (!existsSync(python)) {
    throw new Error(`${python} is missing: run 'make venvs' (make test and make e2e do) to create the test environments`);
  }
  const guardctl = guardctlPath(build);
  const base = mkdtempSync(join(tmpdir(), `guard-e2e-${name}-`));
  const dirs = {
    JUPYTER_DATA_DIR: join(base, 'data'),
    JUPYTER_PATH: join(base, 'path'),
    JUPYTER_RUNTIME_DIR: join(base, 'runtime'),
    JUPYTER_CONFIG_DIR: join(base, 'config'),
    IPYTHONDIR: join(base, 'ipython'),
  };
  const root = join(base, 'root');
  try {
    return await serve({ name, env, notebooks, kernels, resourceUsage, python, guardctl, base, dirs, root });
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
}

async function serve({ name, env, notebooks, kernels, resourceUsage, python, guardctl, base, dirs, root }) {
  for (const d of [root, ...Object.values(dirs)]) mkdirSync(d, { recursive: true });
  chmodSync(dirs.JUPYTER_RUNTIME_DIR, 0o700); // as Jupyter makes it (the proxy says so of any other)

  const artifacts = join(ARTIFACTS, name);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });

  const serverEnv = { ...process.env, ...dirs, ...env };
  // The harness's own settings must not reach the kernels' Pythons.
  delete serverEnv.PYTHONPATH;
  for (const k of ['JUPYTER_TOKEN', 'JUPYTER_PORT', 'JUPYTER_PREFER_ENV_PATH']) delete serverEnv[k];

  // The plain kernels: Python as `python -m ipykernel install` would
  // describe it, and the story's own.
  const plain = {
    [PLAIN.name]: {
      argv: [python, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: PLAIN.display,
      language: 'python',
      metadata: { debugger: true },
    },
    ...kernels,
  };
  for (const [kernel, spec] of Object.entries(plain)) {
    if (isAbsolute(spec.argv[0]) && !existsSync(spec.argv[0])) {
      throw new Error(`${spec.argv[0]} (kernel ${kernel}) is missing: run 'make venvs' (make test and make e2e do)`);
    }
    const dir = join(dirs.JUPYTER_PATH, 'kernels', kernel);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'kernel.json'), JSON.stringify(spec, null, 1));
  }

  // Their guarded forms, installed the way the README tells users to.
  const install = spawnSync(guardctl, ['install', '--user', '--python', python, ...Object.keys(plain).flatMap((k) => ['--kernel', k])],
    { env: serverEnv, encoding: 'utf8' });
  if (install.status !== 0) {
    throw new Error(`guardctl install failed (${install.status}):\n${install.stdout}${install.stderr}`);
  }
  for (const [kernel, spec] of Object.entries(plain)) {
    const guardedSpec = JSON.parse(readFileSync(join(dirs.JUPYTER_DATA_DIR, 'kernels', `${kernel}-guarded`, 'kernel.json'), 'utf8'));
    // argv: /bin/sh -c SCRIPT GUARDCTL kernel …, sh exec'ing guardctl.
    if (guardedSpec.display_name !== `${spec.display_name} (guarded)` || guardedSpec.argv[0] !== '/bin/sh' || guardedSpec.argv[3] !== guardctl) {
      throw new Error(`unexpected guarded kernelspec: ${JSON.stringify(guardedSpec)}`);
    }
  }

  // A fresh profile asks whether to fetch Jupyter's news; say never, so no
  // toast covers the page and nothing asks the internet for updates.
  const settings = join(dirs.JUPYTER_CONFIG_DIR, 'lab', 'user-settings', '@jupyterlab', 'apputils-extension');
  mkdirSync(settings, { recursive: true });
  writeFileSync(join(settings, 'notification.jupyterlab-settings'),
    JSON.stringify({ fetchNews: 'false', checkForUpdates: false }));

  for (const [file, nb] of Object.entries(notebooks)) {
    writeFileSync(join(root, file), JSON.stringify(nb, null, 1));
  }

  // Python packages of the server's extensions go on its sys.path by a
  // jupyter_server_config.py, not PYTHONPATH, which the kernels would inherit.
  const pkgs = join(base, 'python');
  mkdirSync(pkgs);
  writeFileSync(join(dirs.JUPYTER_CONFIG_DIR, 'jupyter_server_config.py'),
    `import sys\nsys.path.insert(0, ${JSON.stringify(pkgs)})\n`);
  // jupyter-guard's server extension and prebuilt lab extension; the server
  // extension runs the guardctl under test.
  installExtension(dirs, pkgs, {
    pkg: join(REPO, 'jupyter_guard'),
    config: join(REPO, 'jupyter-config', 'jupyter_server_config.d', 'jupyter_guard.json'),
    labextension: LABEXTENSION,
    make: 'make labextension',
  });
  serverEnv.JUPYTER_GUARD_GUARDCTL = guardctl;
  // Only where asked: it samples the server every second and its status-bar
  // item polls, which the other stories (the idle server's CPU) must not see.
  if (resourceUsage) {
    installExtension(dirs, pkgs, {
      pkg: join(RESOURCE_USAGE, 'jupyter_resource_usage'),
      config: join(RESOURCE_USAGE, 'etc', 'jupyter', 'jupyter_server_config.d', 'jupyter_resource_usage.json'),
      labextension: join(RESOURCE_USAGE, 'share', 'jupyter', 'labextensions', '@jupyter-server', 'resource-usage'),
      make: 'make e2e-deps',
    });
  }

  const port = await freePort();
  const logPath = join(artifacts, 'jupyter-server.log');
  const log = createWriteStream(logPath);
  const args = [
    '-m', 'jupyterlab',
    '--no-browser',
    '--ip=127.0.0.1',
    `--port=${port}`,
    '--ServerApp.port_retries=0',
    '--IdentityProvider.token=',
    '--ServerApp.password=',
    `--ServerApp.root_dir=${root}`,
    '--LabApp.news_url=None',
    '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
    // Kernels live as long as a story; nothing culls them meanwhile.
    '--MappingKernelManager.cull_idle_timeout=0',
  ];
  if (process.getuid?.() === 0) args.push('--allow-root'); // CI containers run as root
  const proc = spawn(python, args, { cwd: root, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.pipe(log, { end: false });
  proc.stderr.pipe(log, { end: false });
  let exited = null;
  const exit = new Promise((ok) => proc.on('exit', (code, signal) => { exited = { code, signal }; ok(exited); }));

  const url = `http://127.0.0.1:${port}`;
  const server = {
    name, url, root, base, env: serverEnv, logPath, artifacts, guardctl, proc,
    /** The server's log so far (it carries the guard's log too: kernels write to the server's stderr). */
    log: () => readFileSync(logPath, 'utf8'),
    /** Stops the server, shuts its kernels down, and removes the private dirs. */
    stop: async () => {
      if (exited === null) {
        proc.kill('SIGTERM');
        const t = sleep(STOP_TIMEOUT, 'timeout', { ref: false });
        if (await Promise.race([exit, t]) === 'timeout') {
          log.write(`\n[e2e] jupyter lab did not stop within ${STOP_TIMEOUT / 1000}s of SIGTERM; killing it\n`);
          proc.kill('SIGKILL');
          await exit;
        }
      }
      // A story that failed half-way must not leave kernels for the next:
      // anything still naming this server's private directory was started by it.
      for (const pid of processesMentioning(base)) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ }
      }
      log.end();
      rmSync(base, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + START_TIMEOUT;
  for (;;) {
    if (exited !== null) {
      const log = server.log();
      await server.stop();
      throw new Error(`jupyter lab exited (${JSON.stringify(exited)}) before it served ${url}; its log:\n${log}`);
    }
    try {
      const r = await fetch(`${url}/api/status`);
      if (r.ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`jupyter lab did not serve ${url} within ${START_TIMEOUT / 1000}s; see ${logPath}`);
    }
    await sleep(200);
  }
  return server;
}

/**
 * A server extension and its lab extension in the server's private Jupyter
 * dirs, as its wheel installs them: the package (pkg) linked into pkgs, on
 * the server's sys.path; the config file that enables it; the lab extension
 * under labextensions/, by the name in its package.json (which `make`
 * builds or installs).
 */
function installExtension(dirs, pkgs, { pkg, config, labextension, make }) {
  const manifest = join(labextension, 'package.json');
  if (!existsSync(manifest)) {
    throw new Error(`${labextension} is missing: run '${make}' (make e2e does)`);
  }
  const dest = join(dirs.JUPYTER_PATH, 'labextensions', JSON.parse(readFileSync(manifest, 'utf8')).name);
  mkdirSync(dirname(dest), { recursive: true });
  symlinkSync(labextension, dest);

  symlinkSync(pkg, join(pkgs, basename(pkg)));
  const confd = join(dirs.JUPYTER_CONFIG_DIR, 'jupyter_server_config.d');
  mkdirSync(confd, { recursive: true });
  copyFileSync(config, join(confd, basename(config)));
}

/** An nbformat 4 notebook of code cells, for the kernelspec named ({ name, display, language = 'python' }). */
export function notebook(kernel, sources) {
  const language = kernel.language ?? 'python';
  return {
    cells: sources.map((source, i) => ({
      cell_type: 'code', execution_count: null, id: `cell-${i}`, metadata: {}, outputs: [], source,
    })),
    metadata: {
      kernelspec: { name: kernel.name, display_name: kernel.display, language },
      language_info: { name: language },
    },
    nbformat: 4,
    nbformat_minor: 5,
  };
}
