// The side panel: every guarded kernel of the user, named by its notebook,
// as `guardctl status` shows them, with Resume, Interrupt and Restart; for
// the one selected, the picture of its memory over the last minutes
// (`guardctl history`) and its per-cell ledger (`guardctl cells`). It polls
// every 2 s while shown.

import { Dialog, ISessionContext, showDialog } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { Session } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';
import { Action, act, budgetText, cells, formatBytes, history, ICell, IHistory, IKernelState, kernelBytes, kernels, memoryText,
  stateText } from './api';
import { memoryChart } from './chart';

// Every 2 s while a kernel runs or is paused, every 5 s while all idle.
const PANEL_MS = 2000;
const PANEL_IDLE_MS = 5000;

export class GuardPanel extends Widget {
  constructor(tracker: INotebookTracker, private sessions: Session.IManager) {
    super();
    // The notebook in front starting a cell: look now, not at the idle pace.
    const follow = () => {
      const ctx = tracker.currentWidget?.sessionContext;
      if (ctx && ctx !== this.followed) {
        this.followed?.statusChanged.disconnect(this.onStatus, this);
        ctx.statusChanged.connect(this.onStatus, this);
        this.followed = ctx;
      }
    };
    tracker.currentChanged.connect(follow);
    follow();
    this.id = 'jupyter-guard-panel';
    this.addClass('jp-GuardPanel');
    this.title.caption = 'jupyter-guard: guarded kernels';
    this.node.innerHTML = '<h2>Guarded Kernels</h2><div class="jp-GuardPanel-error" role="alert"></div>' +
      '<ul class="jp-GuardPanel-kernels"></ul>' +
      '<p class="jp-GuardPanel-none">No guarded kernel is running.</p>' +
      '<h3 class="jp-GuardPanel-chartTitle"></h3><div class="jp-GuardPanel-chart"></div>' +
      '<h3 class="jp-GuardPanel-cellsTitle"></h3><table class="jp-GuardPanel-cells"><tbody></tbody></table>';
  }

  /** Looks now, then every 2 s while the panel shows. */
  async refresh(fresh = false): Promise<void> {
    window.clearTimeout(this.timer);
    try {
      this.kernels = await kernels(fresh, this.running ? PANEL_MS - 500 : PANEL_IDLE_MS - 500);
      this.showError('');
      if (this.selected && !this.kernels.some((k) => k.kernel_id === this.selected)) {
        this.selected = null;
      }
      this.selected = this.selected ?? this.kernels[0]?.kernel_id ?? null;
      this.render();
      // The ledger and the history only when they may have changed: a
      // cell ran, or runs; in between, the picture moves on with the
      // kernel list's figures.
      const sel = this.kernels.find((k) => k.kernel_id === this.selected);
      const mark = sel ? JSON.stringify([sel.state, sel.last_cell]) : '';
      if (fresh || mark !== this.ledgerMark || sel?.state === 'busy' || sel?.state === 'paused') {
        this.ledgerMark = mark;
        await this.renderSelected();
      } else {
        this.renderChart();
      }
    } catch (err) {
      this.showError(String((err as Error).message ?? err));
    }
    if (this.isVisible) {
      // The notebook in front may have gone busy after this answer was made.
      this.running = this.kernels.some((k) => k.state !== 'idle' && k.state !== 'dead') ||
        this.followed?.kernelDisplayStatus === 'busy';
      this.timer = window.setTimeout(() => void this.refresh(), this.running ? PANEL_MS : PANEL_IDLE_MS);
    }
  }

  private onStatus(_: unknown, status: string): void {
    if (status === 'busy' && !this.running && this.isVisible) {
      this.running = true; // and so a fresher answer than the idle pace's
      void this.refresh();
    }
  }

  protected onAfterShow(): void {
    void this.refresh();
  }

  protected onAfterHide(): void {
    window.clearTimeout(this.timer);
  }

  private showError(msg: string): void {
    const el = this.node.querySelector('.jp-GuardPanel-error') as HTMLElement;
    el.textContent = msg;
    el.hidden = !msg;
  }

  private render(): void {
    const body = this.node.querySelector('.jp-GuardPanel-kernels')!;
    (this.node.querySelector('.jp-GuardPanel-none') as HTMLElement).hidden = this.kernels.length > 0;
    body.replaceChildren(...this.kernels.map((k) => this.row(k)));
  }

  /** The kernel's notebook, as the server's sessions or the kernel itself name it, else its kernelspec. */
  private nameOf(k: IKernelState): string {
    let path = k.notebook;
    for (const m of this.sessions.running()) {
      if (!path && m.kernel?.id === k.kernel_id) {
        path = m.path;
      }
    }
    return path ? path.split('/').pop()! : k.kernelspec;
  }

  /** One kernel: "grow.ipynb PAUSED 9044d259", its memory, its buttons. */
  private row(k: IKernelState): HTMLElement {
    const li = document.createElement('li');
    li.dataset.kernelId = k.kernel_id;
    li.dataset.state = k.state;
    li.classList.toggle('jp-mod-selected', k.kernel_id === this.selected);
    li.classList.toggle('jp-mod-paused', k.state === 'paused');
    li.title = `${k.kernel_id} (${k.kernelspec})${k.notebook ? `\n${k.notebook}` : ''}`;
    const span = (parent: HTMLElement, text: string, cls: string) => {
      const el = document.createElement('span');
      el.textContent = text;
      el.className = cls;
      parent.appendChild(el);
      return el;
    };
    const head = document.createElement('div');
    span(head, this.nameOf(k), 'jp-GuardPanel-notebook');
    span(head, stateText(k.state), 'jp-GuardPanel-state');
    span(head, k.kernel_id.slice(0, 8), 'jp-GuardPanel-id');
    li.appendChild(head);
    const mem = document.createElement('div');
    span(mem, memoryText(k.memory), 'jp-GuardPanel-memory');
    span(mem, ` (${budgetText(k.memory)})`, 'jp-GuardPanel-source');
    mem.title = `budget from ${k.memory.limit_source}`;
    li.appendChild(mem);
    const buttons = document.createElement('div');
    buttons.className = 'jp-GuardPanel-actions';
    for (const action of ['resume', 'interrupt', 'restart'] as Action[]) {
      const b = document.createElement('button');
      b.className = `jp-Button jp-mod-styled ${action === 'resume' && k.state === 'paused' ? 'jp-mod-accept' : 'jp-mod-reject'} jp-GuardPanel-button`;
      b.textContent = action[0].toUpperCase() + action.slice(1);
      b.title = `${b.textContent} kernel ${k.kernel_id.slice(0, 8)}`;
      b.disabled = action === 'resume' ? k.state !== 'paused' : k.state === 'dead' || k.state === 'restarting';
      if (b.disabled) {
        b.title += action === 'resume' ? ': only while the guard holds it paused' : ': no kernel runs';
      }
      b.addEventListener('click', (e) => {
        e.stopPropagation();
        void this.act(k, action);
      });
      buttons.appendChild(b);
    }
    li.appendChild(buttons);
    li.addEventListener('click', () => {
      this.selected = k.kernel_id;
      this.render();
      void this.renderSelected();
    });
    return li;
  }

  private async act(k: IKernelState, action: Action): Promise<void> {
    if (action === 'restart') {
      const ok = await showDialog({
        title: 'Restart the kernel?',
        body: `Kernel ${k.kernel_id.slice(0, 8)}${k.notebook ? ` (${k.notebook})` : ''} restarts: its variables are lost.`,
        buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Restart' })],
      });
      if (!ok.button.accept) {
        return;
      }
    }
    try {
      await act(k.kernel_id, action);
    } catch (err) {
      this.showError(`${action}: ${String((err as Error).message ?? err)}`);
      return;
    }
    await this.refresh(true);
  }

  /** Reads the selected kernel's ledger and history, and shows both. */
  private async renderSelected(): Promise<void> {
    const id = this.selected;
    if (!id) {
      this.ledger = [];
      this.history = null;
    } else {
      [this.ledger, this.history] = await Promise.all([cells(id).catch(() => []), history(id).catch(() => null)]);
      if (id !== this.selected) {
        return; // another was chosen meanwhile
      }
    }
    this.renderChart();
    this.renderCells();
  }

  /** The selected kernel's memory over the last minutes, its latest figures as the last point. */
  private renderChart(): void {
    const title = this.node.querySelector('.jp-GuardPanel-chartTitle') as HTMLElement;
    const box = this.node.querySelector('.jp-GuardPanel-chart') as HTMLElement;
    const k = this.kernels.find((x) => x.kernel_id === this.selected);
    if (!k || !this.history) {
      title.textContent = '';
      box.replaceChildren();
      return;
    }
    const m = k.memory;
    const at = m.measured_at ? Date.parse(m.measured_at) : NaN;
    const now = Number.isNaN(at) ? null : { t: at, kernel: kernelBytes(m), used: m.used_bytes };
    const name = this.nameOf(k);
    title.textContent = `Memory of ${name}`;
    box.replaceChildren(memoryChart(this.history, now, this.ledger, Math.max(200, box.clientWidth || 280), name));
  }

  private renderCells(): void {
    const title = this.node.querySelector('.jp-GuardPanel-cellsTitle') as HTMLElement;
    const body = this.node.querySelector('.jp-GuardPanel-cells tbody')!;
    if (!this.selected) {
      title.textContent = '';
      body.replaceChildren();
      return;
    }
    title.textContent = 'Cells: growth (or running), peak';
    const rows = this.ledger.slice(-20).reverse().map((c) => {
      const tr = document.createElement('tr');
      const growth = `${c.growth_bytes >= 0 ? '+' : '-'}${formatBytes(Math.abs(c.growth_bytes))}`;
      for (const [text, cls] of [
        [`[${c.execution_count}] ${c.code}`, 'jp-GuardPanel-code'],
        [c.running ? 'running' : growth, 'jp-GuardPanel-num'],
        [formatBytes(c.peak_bytes), 'jp-GuardPanel-num'],
      ]) {
        const td = document.createElement('td');
        td.textContent = text;
        td.className = cls;
        tr.appendChild(td);
      }
      tr.title = `${c.code}\nstart ${formatBytes(c.start_bytes)}, peak ${formatBytes(c.peak_bytes)}, end ${formatBytes(c.end_bytes)}, growth ${growth}`;
      return tr;
    });
    body.replaceChildren(...rows);
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private kernels: IKernelState[] = [];
  private ledger: ICell[] = [];
  private history: IHistory | null = null;
  private selected: string | null = null;
  private ledgerMark = '';
  private running = true;
  private followed: ISessionContext | null = null;
  private timer: number | undefined;
}
