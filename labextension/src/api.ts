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
  memory: {
    used_bytes: number;
    budget_bytes: number;
    share: number;
    limit_source: string;
    limit_unseen?: string;
  };
  gpu?: { index: number; name: string; used_bytes: number; total_bytes: number }[];
  gpu_unknown?: string;
  deaths: number;
  last_cell?: ICell;
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
export const act = (id: string, action: Action) =>
  request<IKernelState>(`kernels/${encodeURIComponent(id)}/${action}`, { method: 'POST' });

/** 1.5 GiB, 412 MiB: as guardctl prints sizes. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  const digits = i === 0 || n >= 100 ? 0 : n >= 10 ? 0 : 1;
  return `${n.toFixed(digits)} ${units[i]}`;
}

/** "412 MiB / 600 MiB (69%)", or the used figure alone without a budget. */
export function memoryText(m: IKernelState['memory']): string {
  if (!m.budget_bytes) {
    return formatBytes(m.used_bytes);
  }
  return `${formatBytes(m.used_bytes)} / ${formatBytes(m.budget_bytes)} (${Math.round(m.share * 100)}%)`;
}

/** The state as users should read it: the ones that need a person in capitals. */
export function stateText(state: string): string {
  return state === 'paused' || state === 'dead' ? state.toUpperCase() : state;
}
