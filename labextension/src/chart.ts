// The picture of one kernel's memory in the panel: its own figure over the
// last minutes against the budget, the warning and the pause lines, and
// where the budget counts the host or a shared cgroup, that figure too;
// each cell a band from its start to its end, numbered as the notebook
// numbers it, with what it added. Plain SVG, drawn afresh at each look.

import { ICell, IHistory, formatBytes } from './api';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 150;
const TOP = 16; // room for the cells' labels, and the budget's
const MIN_SPAN_MS = 30_000;
const MAX_SPAN_MS = 10 * 60_000;

/** A point to draw: time (ms since the epoch) and bytes. */
interface IPoint {
  t: number;
  kernel: number;
  used: number;
}

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>, parent?: Element) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) {
    e.setAttribute(k, String(v));
  }
  parent?.appendChild(e);
  return e;
}

/**
 * Draws the history h, with now (the kernel's latest figures, as the
 * kernel list gives them) as its last point, and the cells of the ledger
 * that fall in the window, into an SVG width pixels wide.
 */
export function memoryChart(h: IHistory, now: IPoint | null, cells: ICell[], width: number, label: string): SVGSVGElement {
  const points: IPoint[] = h.points.slice();
  if (now && (points.length === 0 || now.t >= points[points.length - 1].t)) {
    points.push(now);
  }
  const svg = el('svg', { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', class: 'jp-GuardChart' });
  el('title', {}, svg).textContent = `Memory of ${label} over the last minutes`;
  if (points.length === 0 || !h.budget_bytes) {
    return svg;
  }
  const end = points[points.length - 1].t;
  const span = Math.min(MAX_SPAN_MS, Math.max(MIN_SPAN_MS, end - points[0].t));
  const start = end - span;
  const shown = points.filter((p) => p.t >= start);
  const shared = h.scope === 'host' || h.scope === 'cgroup';
  const top = Math.max(h.budget_bytes, ...shown.map((p) => Math.max(p.kernel, shared ? p.used : 0)));
  const x = (t: number) => ((t - start) / span) * (width - 2) + 1;
  const y = (b: number) => HEIGHT - 1 - (b / top) * (HEIGHT - TOP - 2);

  // The cells: a band from start to end (to now while one runs), labelled
  // newest first, each where it does not run into the next one's label.
  let nextLabel = Infinity;
  for (const c of cells.slice().reverse()) {
    const from = Date.parse(c.start);
    const to = c.end ? Date.parse(c.end) : end;
    if (to < start || Number.isNaN(from)) {
      continue;
    }
    const g = el('g', { class: 'jp-GuardChart-cell', 'data-cell': c.execution_count }, svg);
    const x0 = x(Math.max(from, start));
    el('rect', { x: x0, y: TOP, width: Math.max(1, x(to) - x0), height: HEIGHT - TOP, class: 'jp-GuardChart-band' }, g);
    el('line', { x1: x0, x2: x0, y1: TOP, y2: HEIGHT, class: 'jp-GuardChart-start' }, g);
    const grew = c.running ? '' : ` ${c.growth_bytes >= 0 ? '+' : '-'}${formatBytes(Math.abs(c.growth_bytes))}`;
    el('title', {}, g).textContent = `[${c.execution_count}] ${c.code}${grew}`;
    // A label where it does not overlap the one before.
    const text = `[${c.execution_count}]${Math.abs(c.growth_bytes) >= 1 << 20 ? grew : ''}`;
    const at = Math.max(0, Math.min(x0 + 2, width - 2 - 6 * text.length)); // about 6 px a character
    if (nextLabel - at > 6 * text.length + 4) {
      const t = el('text', { x: at, y: TOP - 3, class: 'jp-GuardChart-label' }, g);
      t.textContent = text;
      nextLabel = at;
    }
  }

  // The lines, on the figure the budget counts.
  for (const [bytes, cls, name] of [
    [h.budget_bytes, 'jp-GuardChart-budget', 'budget'],
    [h.pause_bytes, 'jp-GuardChart-pause', 'pause'],
    [h.warn_bytes, 'jp-GuardChart-warn', 'warn'],
  ] as [number, string, string][]) {
    if (!bytes) {
      continue;
    }
    el('line', { x1: 0, x2: width, y1: y(bytes), y2: y(bytes), class: cls, 'data-bytes': bytes }, svg);
    // On the left (the cells' labels are above, mostly on the right, where
    // the newest are): the budget's over its line, the others under theirs.
    const t = el('text', { x: 2, y: name === 'budget' ? y(bytes) - 2 : y(bytes) + 10, class: `jp-GuardChart-lineLabel ${cls}` }, svg);
    t.textContent = `${name} ${formatBytes(bytes)}`;
  }

  const path = (f: (p: IPoint) => number) =>
    shown.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(f(p)).toFixed(1)}`).join('');
  if (shared) {
    el('path', { d: path((p) => p.used), class: 'jp-GuardChart-used', 'data-scope': h.scope }, svg);
  }
  const last = shown[shown.length - 1];
  el('path', {
    d: `${path((p) => p.kernel)}L${x(last.t).toFixed(1)},${HEIGHT}L${x(shown[0].t).toFixed(1)},${HEIGHT}Z`,
    class: 'jp-GuardChart-area',
  }, svg);
  el('path', { d: path((p) => p.kernel), class: 'jp-GuardChart-kernel' }, svg);
  svg.dataset.points = String(shown.length);
  svg.dataset.lastKernel = String(last.kernel);
  svg.dataset.lastTime = String(last.t);
  svg.dataset.top = String(top);
  return svg;
}
