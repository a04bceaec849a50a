// The status-bar item: the current notebook's guarded kernel, its own memory
// against the budget, where the budget comes from (and what the host or a
// shared cgroup uses, when the budget counts that), and its state:
// "Guard: 412 MiB / 600 MiB (JUPYTER_GUARD_LIMIT) · busy". A paused kernel
// reads PAUSED here (JupyterLab's own kernel status says Busy, since its
// cell has not ended).
//
// It polls only while the notebook in front runs a guarded kernel (its
// kernelspec carries the guard's "jupyter_guard" metadata): every second
// while the kernel is busy or paused, every 5 s while it idles, every 15 s
// while the page is hidden; not at all otherwise.

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { KernelSpec } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { IKernelState, budgetText, formatBytes, kernels, kernelBytes, memoryText, stateText } from './api';

export const FAST_MS = 1000;
export const IDLE_MS = 5000;
export const HIDDEN_MS = 15000;

export class GuardStatus extends Widget {
  constructor(private tracker: INotebookTracker, private specs: KernelSpec.IManager, private onClick: () => void) {
    super();
    this.addClass('jp-GuardStatus');
    this.addClass('jp-StatusBar-TextItem');
    this.node.setAttribute('role', 'button');
    this.node.addEventListener('click', () => this.onClick());
    tracker.currentChanged.connect(this.follow, this);
    // The kernelspecs may arrive after the notebook's kernel: look again then.
    specs.specsChanged.connect(this.check, this);
    document.addEventListener('visibilitychange', () => this.schedule(0));
    this.follow();
  }

  /** Whether the item shows: a guarded kernel is in front. */
  get guarded(): boolean {
    return this.kernelId !== null;
  }

  get activeStateChanged(): ISignal<this, void> {
    return this._activeStateChanged;
  }

  private follow(): void {
    if (this.panel) {
      this.panel.sessionContext.kernelChanged.disconnect(this.check, this);
      this.panel.sessionContext.statusChanged.disconnect(this.onStatus, this);
    }
    this.panel = this.tracker.currentWidget;
    if (this.panel) {
      this.panel.sessionContext.kernelChanged.connect(this.check, this);
      this.panel.sessionContext.statusChanged.connect(this.onStatus, this);
    }
    this.check();
  }

  /** Finds whether the kernel in front is guarded, and starts or stops polling. */
  private check(): void {
    const kernel = this.panel?.sessionContext.session?.kernel;
    const spec = kernel ? this.specs.specs?.kernelspecs[kernel.name] : undefined;
    const id = kernel && spec?.metadata?.['jupyter_guard'] ? kernel.id : null;
    if (id !== this.kernelId) {
      this.kernelId = id;
      this.state = null;
      this.render();
      this._activeStateChanged.emit();
    }
    this.schedule(0);
  }

  private onStatus(): void {
    // The kernel went busy: look now, and then every second.
    if (this.panel?.sessionContext.kernelDisplayStatus === 'busy' && this.delay > FAST_MS) {
      this.schedule(0);
    }
  }

  private schedule(ms: number): void {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.kernelId === null) {
      return;
    }
    this.delay = ms;
    this.timer = window.setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    const id = this.kernelId;
    if (id === null) {
      return;
    }
    try {
      // Idle, an answer the panel got since the last look will do.
      const all = await kernels(false, this.delay > FAST_MS ? this.delay - 500 : FAST_MS);
      if (id !== this.kernelId) {
        return;
      }
      this.state = all.find((k) => k.kernel_id === id) ?? null;
      this.error = '';
    } catch (err) {
      this.error = String((err as Error).message ?? err);
    }
    this.render();
    const st = this.state?.state;
    const running = st === 'busy' || st === 'paused' || st === 'starting' || st === 'restarting' ||
      this.panel?.sessionContext.kernelDisplayStatus === 'busy';
    this.schedule(document.hidden ? HIDDEN_MS : running ? FAST_MS : IDLE_MS);
  }

  private render(): void {
    const s = this.state;
    this.node.classList.toggle('jp-mod-paused', s?.state === 'paused');
    this.node.classList.toggle('jp-mod-warn', !!s && s.memory.share >= 0.8);
    this.node.dataset.state = s?.state ?? '';
    if (!s) {
      this.node.textContent = this.kernelId ? 'Guard: …' : '';
      this.node.title = this.error ? `jupyter-guard: ${this.error}` : 'jupyter-guard: waiting for the kernel';
      return;
    }
    const gpu = gpuText(s);
    const m = s.memory;
    this.node.textContent = `Guard: ${memoryText(m)} (${budgetText(m)})${gpu ? ` · ${gpu}` : ''} · ${stateText(s.state)}`;
    const lines = [
      `jupyter-guard, kernel ${s.kernel_id.slice(0, 8)}${s.notebook ? ` (${s.notebook})` : ''}`,
      `the kernel's memory ${formatBytes(kernelBytes(m))} (${m.kernel_source ?? 'tree_rss'}) of its ${formatBytes(m.budget_bytes)} budget ` +
        `from ${m.limit_source}`,
    ];
    if (m.scope === 'host' || m.scope === 'cgroup') {
      const where = m.scope === 'host' ? 'the host uses' : 'the cgroup it shares uses';
      lines.push(`the budget counts what ${where}: ${formatBytes(m.used_bytes)} (${Math.round(m.share * 100)}%)`);
    }
    if (m.warn_bytes && m.pause_bytes) {
      lines.push(`warns at ${formatBytes(m.warn_bytes)}, pauses at ${formatBytes(m.pause_bytes)}`);
    }
    if (s.memory.limit_unseen) {
      lines.push(`a limit the guard cannot read may bind: ${s.memory.limit_unseen}`);
    }
    if (s.gpu_unknown) {
      lines.push(`GPU memory unknown: ${s.gpu_unknown}`);
    } else if (gpu) {
      lines.push(`${gpu} on ${s.gpu!.map((g) => `GPU ${g.index} (${g.name})`).join(', ')}`);
    }
    if (s.state === 'paused') {
      lines.push('PAUSED before it ran out of memory: click for Resume, Interrupt, Restart');
    }
    this.node.title = lines.join('\n');
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private panel: NotebookPanel | null = null;
  private kernelId: string | null = null;
  private state: IKernelState | null = null;
  private error = '';
  private timer: number | undefined;
  private delay = 0;
  private _activeStateChanged = new Signal<this, void>(this);
}

/**
 * The kernel's GPU memory when it holds any: "GPU 3.2 GiB"; "GPU ?" when
 * NVML could not say (the tooltip says why); nothing on machines without one.
 */
export function gpuText(s: IKernelState): string {
  if (s.gpu_unknown) {
    return 'GPU ?';
  }
  const used = (s.gpu ?? []).reduce((a, g) => a + g.used_bytes, 0);
  return used > 0 ? `GPU ${formatBytes(used)}` : '';
}
