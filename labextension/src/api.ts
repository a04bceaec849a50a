// The server extension's REST API (jupyter_guard/handlers.py), which runs
// guardctl: the same figures, the same owner check.

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** One guarded kernel, as `guardctl status --json` prints it (control/api.go). */
export interface IKernelState {
  kernel_id: string;
  kernelspec: string;
  notebook?: string;
  state: 'starting' | 'idle' | 'busy' | 'paused' | 'restarting' | 'dead' | string;
  started: string;
  memory: IMemory;
  gpu?: { index: number; name: string; used_bytes: number; total_bytes: number }[];
  gpu_unknown?: string;
  deaths: number;
  last_cell?: ICell;
}

/**
 * The kernel's memory: its own figure (kernel_bytes) against the budget,
 * and what the budget counts (used_bytes), which is the host's or a shared
 * cgroup's where scope says so.
 */
export interface IMemory {
  kernel_bytes?: number; // absent from a proxy older than the field: used_bytes
  kernel_source?: string;
  used_bytes: number;
  scope?: 'kernel' | 'cgroup' | 'host' | string;
  budget_bytes: number;
  share: number;
  warn_bytes?: number;
  pause_bytes?: number;
  limit_source: string;
  budget_from?: string;
  limit_unseen?: string;
  measured_at?: string;
}

/** A kernel's memory over the last minutes (`guardctl history --json`). */
export interface IHistory {
  budget_bytes: number;
  warn_bytes: number;
  pause_bytes: number;
  kernel_source: string;
  scope: string;
  points: { t: number; kernel: number; used: number }[];
}

/** One cell of the ledger, as `guardctl cells --json` prints it. */
export interface ICell {
  execution_count: number;
  code: string;
  start: string;
  end?: string;
  running?: boolean;
  start_bytes: number;
  peak_bytes: number;
  end_bytes: number;
  growth_bytes: number;
  gpu_peak_bytes?: number;
}

export type Action = 'resume' | 'interrupt' | 'restart';

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'jupyter-guard', path);
  const resp = await ServerConnection.makeRequest(url, init, settings);
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    throw new Error(body?.error || `${resp.status} ${resp.statusText}`);
  }
  return body as T;
}

// The status-bar item and the panel share answers: one younger than maxAge
// ms (at least a second) is reused, so together they never ask more often
// than once a second, and while idle, no more often than either alone.
// fresh (after an action) asks again.
let last: { at: number; answer: Promise<IKernelState[]> } | null = null;

export function kernels(fresh = false, maxAge = 1000): Promise<IKernelState[]> {
  const now = Date.now();
  if (!fresh && last && now - last.at < Math.max(maxAge, 1000)) {
    return last.answer;
  }
  const answer = request<IKernelState[]>('kernels');
  last = { at: now, answer };
  answer.catch(() => {
    if (last?.answer === answer) last = null;
  });
  return answer;
}
export const cells = (id: string) => request<ICell[]>(`kernels/${encodeURIComponent(id)}/cells`);
export const history = (id: string) => request<IHistory>(`kernels/${encodeURIComponent(id)}/history`);
export const act = (id: string, action: Action) =>
  request<IKernelState>(`kernels/${encodeURIComponent(id)}/${action}`, { method: 'POST' });

/** 1.5 GiB, 412 MiB, 23.5 GiB: as guardctl prints sizes (guard/units). */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  if (n < 1024) {
    return `${Math.round(n)} B`;
  }
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  // Three significant digits, trailing zeros dropped: 1.95 GiB, 11.3 GiB, 512 MiB.
  let text = n.toFixed(n < 9.995 ? 2 : n < 99.95 ? 1 : 0);
  if (text.includes('.')) {
    text = text.replace(/\.?0+$/, '');
  }
  if (text === '1024' && i < units.length - 1) {
    text = '1';
    i++;
  }
  return `${text} ${units[i]}`;
}

/** The kernel's own memory, in bytes. */
export function kernelBytes(m: IMemory): number {
  return m.kernel_bytes ?? m.used_bytes;
}

/** "412 MiB / 600 MiB": the kernel's own memory against its budget. */
export function memoryText(m: IMemory): string {
  const own = formatBytes(kernelBytes(m));
  return m.budget_bytes ? `${own} / ${formatBytes(m.budget_bytes)}` : own;
}

/**
 * Where the budget comes from, and what the host or a shared cgroup uses
 * when the budget counts that: "MEM_LIMIT", "host: 1.9 GiB used".
 */
export function budgetText(m: IMemory): string {
  if (m.scope === 'host' || m.scope === 'cgroup') {
    return `${m.scope}: ${formatBytes(m.used_bytes)} used`;
  }
  return m.budget_from || m.limit_source;
}

/** The state as users should read it: the ones that need a person in capitals. */
export function stateText(state: string): string {
  return state === 'paused' || state === 'dead' ? state.toUpperCase() : state;
}
