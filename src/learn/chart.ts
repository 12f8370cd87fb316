// Small self-contained SVG line charts for training reports (no browser, no dependencies).

export interface Series {
  name: string;
  points: [number, number][];
  color?: string;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  width?: number;
  height?: number;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Tick values at 1, 2 or 5 times a power of ten covering [lo, hi]. */
function ticks(lo: number, hi: number, count = 5): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= count) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** One panel: axes, ticks, a line per series and a legend. */
export function lineChart(spec: ChartSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 300;
  const m = { left: 64, right: 16, top: 32, bottom: 44 };
  const all = spec.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xs = all.map(([x]) => x);
  const ys = all.map(([, y]) => y);
  const x0 = Math.min(...xs, 0);
  const x1 = Math.max(...xs, 1);
  let y0 = Math.min(...ys);
  let y1 = Math.max(...ys);
  if (!Number.isFinite(y0)) [y0, y1] = [0, 1];
  if (y0 === y1) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const pad = (y1 - y0) * 0.05;
  y0 -= pad;
  y1 += pad;
  const px = (x: number) => m.left + ((x - x0) / (x1 - x0 || 1)) * (width - m.left - m.right);
  const py = (y: number) => height - m.bottom - ((y - y0) / (y1 - y0)) * (height - m.top - m.bottom);

  const parts: string[] = [];
  parts.push(`<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(spec.title)}</text>`);
  parts.push(`<line x1="${m.left}" y1="${height - m.bottom}" x2="${width - m.right}" y2="${height - m.bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${height - m.bottom}" stroke="#333"/>`);
  for (const t of ticks(x0, x1)) {
    parts.push(`<line x1="${px(t)}" y1="${height - m.bottom}" x2="${px(t)}" y2="${height - m.bottom + 4}" stroke="#333"/>`);
    parts.push(`<text x="${px(t)}" y="${height - m.bottom + 16}" text-anchor="middle" font-size="11">${t}</text>`);
  }
  for (const t of ticks(y0, y1)) {
    parts.push(`<line x1="${m.left}" y1="${py(t)}" x2="${width - m.right}" y2="${py(t)}" stroke="#eee"/>`);
    parts.push(`<text x="${m.left - 6}" y="${py(t) + 4}" text-anchor="end" font-size="11">${t}</text>`);
  }
  parts.push(`<text x="${width / 2}" y="${height - 8}" text-anchor="middle" font-size="12">${esc(spec.xLabel)}</text>`);
  parts.push(`<text x="14" y="${height / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 14 ${height / 2})">${esc(spec.yLabel)}</text>`);
  spec.series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length]!;
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length > 0) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`);
    parts.push(`<rect x="${m.left + 10}" y="${m.top + 4 + i * 16}" width="10" height="10" fill="${color}"/>`);
    parts.push(`<text x="${m.left + 26}" y="${m.top + 13 + i * 16}" font-size="11">${esc(s.name)}</text>`);
  });
  return `<g>${parts.join('')}</g>`;
}

/** Stack panels vertically into one SVG document. */
export function svgDocument(panels: ChartSpec[]): string {
  const width = Math.max(...panels.map((p) => p.width ?? 640));
  let y = 0;
  const groups = panels.map((p) => {
    const g = `<g transform="translate(0 ${y})">${lineChart(p)}</g>`;
    y += p.height ?? 300;
    return g;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${groups.join('')}</svg>\n`;
}
