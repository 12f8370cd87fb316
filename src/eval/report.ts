// The evaluation report: per suite and split, each metric's mean +- 95% interval for every system
// (best in bold), as Markdown shaped like the MASCOT paper's tables; every number as JSON; every
// transcript as JSONL; and one SVG bar chart per split. Nothing in it depends on the clock, so two
// runs with the same seeds write identical files.
import fs from 'node:fs';
import path from 'node:path';
import { bestOfNMarkdown } from './best-of-n.ts';
import type { ConversationResult, EvalResults, Metric } from './runner.ts';
import { interval, type Interval } from './stats.ts';

export interface SplitSummary {
  suite: string;
  /** A split name, or 'all' for the whole suite. */
  split: string;
  /** Conversations per system. */
  n: number;
  rows: { system: string; values: Record<string, Interval | null>; errors: number }[];
}

export function summarize(results: EvalResults): SplitSummary[] {
  const out: SplitSummary[] = [];
  for (const suite of results.meta.suites) {
    for (const split of [...suite.splits, 'all']) {
      const inSplit = results.conversations.filter((c) => c.suite === suite.name && (split === 'all' || c.split === split));
      const rows = results.systems.map((system) => {
        const mine = inSplit.filter((c) => c.system === system);
        const values: Record<string, Interval | null> = {};
        for (const m of results.metrics) values[m.key] = interval(mine.flatMap((c) => (typeof c.metrics[m.key] === 'number' ? [c.metrics[m.key] as number] : [])));
        return { system, values, errors: mine.filter((c) => c.errors.length > 0).length };
      });
      out.push({ suite: suite.name, split, n: inSplit.length / Math.max(1, results.systems.length), rows });
    }
  }
  return out;
}

/** The best mean of a column (max or min), or undefined when the column has no direction. */
function best(summary: SplitSummary, m: Metric): number | undefined {
  if (m.better === 'none') return undefined;
  const means = summary.rows.flatMap((r) => (r.values[m.key] ? [r.values[m.key]!.mean] : []));
  if (means.length < 2) return undefined;
  return m.better === 'higher' ? Math.max(...means) : Math.min(...means);
}

function cell(v: Interval | null, m: Metric, top: number | undefined): string {
  if (!v) return 'n/a';
  const digits = m.key === 'turnsPerRound' ? 2 : 1;
  const text = `${v.mean.toFixed(digits)} ± ${v.half.toFixed(digits)}`;
  return top !== undefined && Math.abs(v.mean - top) < 1e-9 ? `**${text}**` : text;
}

export function markdownTable(summary: SplitSummary, metrics: Metric[]): string {
  const head = `| System | ${metrics.map((m) => m.label + (m.better === 'lower' ? ' ↓' : '')).join(' | ')} |`;
  const rule = `|---|${metrics.map(() => '---:').join('|')}|`;
  const body = summary.rows.map((r) => `| ${r.system} | ${metrics.map((m) => cell(r.values[m.key] ?? null, m, best(summary, m))).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

export function markdownReport(results: EvalResults, summaries: SplitSummary[]): string {
  const { meta } = results;
  const own = results.metrics.filter((m) => m.group === 'collective' || m.group === 'outcome');
  const judged = results.metrics.filter((m) => m.group === 'agent' || m.group === 'judged');
  const lines = [
    '# MASCOT evaluation report',
    '',
    `- Suites: ${meta.suites.map((s) => `${s.name} (${s.scenarios} scenarios, pack ${s.pack}, splits ${s.splits.join('/')})`).join('; ')}`,
    `- Seeds: ${meta.seeds.join(', ')}; at most ${meta.maxRounds} rounds per conversation`,
    `- Systems: ${results.systems.join(', ')}${meta.ablationBase ? ` (ablations of ${meta.ablationBase}: ${meta.ablations.join(', ')})` : ''}`,
    `- Simulated user: ${meta.user}; speakers: ${meta.voice}; judge: ${meta.judge ?? 'none (agent-level rubric scores need --judge llm)'}`,
    `- Group reward weights: ${Object.entries(meta.weights).map(([k, v]) => `${k} ${v}`).join(', ')}; fidelity scored by ${meta.fidelity}`,
    ...(meta.bestOf ? [`- Best-of-N: ${meta.bestOf.sizes.join(', ')} candidates per turn for ${meta.bestOf.policies.join(', ')}, ranked by ${meta.bestOf.ranker}`] : []),
    '',
    'Each cell is the mean over conversations ± the half-width of its 95% confidence interval (Student t).',
    'Fidelity, Originality, Relevance, Engagement and Overall are the group reward over the whole conversation',
    '(0-100; Overall is the weighted total, so the over-talking penalty can take it below 0). Over-talk is the',
    'penalty itself (lower is better). Needs met is the share of the simulated person\'s needs met by the end,',
    'Resolved the share of conversations the person ended satisfied, Turns/round the companion turns per round.',
    'Best mean per column in bold.',
    ...(results.metrics.some((m) => m.key === 'fidelityCheck')
      ? ['Fidelity (check) is the role/strategy check, shown next to the reward model\'s Fidelity because best-of-N ranks', 'candidates with that same model.']
      : []),
  ];
  for (const s of summaries) {
    const errors = s.rows.reduce((a, r) => a + r.errors, 0);
    lines.push('', `## ${s.suite} / ${s.split} (${s.n} conversation${s.n === 1 ? '' : 's'} per system)`, '', markdownTable(s, own));
    if (judged.length > 0) lines.push('', 'Judged on the MASCOT rubric (0-100):', '', markdownTable(s, judged));
    if (errors > 0) lines.push('', `${errors} conversation(s) hit an error (details in results.json); their remaining numbers are included.`);
  }
  lines.push(...bestOfNMarkdown(results));
  return `${lines.join('\n')}\n`;
}

const COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A grouped bar chart of one split: one group per 0-100 metric, one bar per system, 95% intervals as whiskers. */
export function svgChart(summary: SplitSummary, metrics: Metric[]): string {
  const shown = metrics.filter((m) => m.key !== 'turnsPerRound');
  const systems = summary.rows.map((r) => r.system);
  const W = Math.max(720, 80 + shown.length * (systems.length * 14 + 24));
  const H = 380;
  const top = 40;
  const left = 50;
  const plotH = 240;
  const groupW = (W - left - 20) / shown.length;
  const barW = Math.min(18, (groupW - 16) / systems.length);
  const lo = Math.min(0, ...summary.rows.flatMap((r) => shown.map((m) => (r.values[m.key] ? r.values[m.key]!.mean - r.values[m.key]!.half : 0))));
  const y = (v: number) => top + plotH - ((v - lo) / (100 - lo)) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W.toFixed(0)}" height="${H}" viewBox="0 0 ${W.toFixed(0)} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">${esc(`${summary.suite} / ${summary.split}`)} (${summary.n} conversations per system, mean ± 95% CI)</text>`,
  ];
  for (let v = Math.ceil(lo / 20) * 20; v <= 100; v += 20) {
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`, `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
  }
  shown.forEach((m, g) => {
    const x0 = left + g * groupW + (groupW - barW * systems.length) / 2;
    summary.rows.forEach((r, k) => {
      const v = r.values[m.key];
      if (!v) return;
      const x = x0 + k * barW;
      const y0 = y(Math.max(lo, 0));
      const y1 = y(v.mean);
      parts.push(`<rect x="${x.toFixed(1)}" y="${Math.min(y0, y1).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${Math.abs(y0 - y1).toFixed(1)}" fill="${COLORS[k % COLORS.length]}"><title>${esc(`${r.system} ${m.label}: ${v.mean.toFixed(1)} ± ${v.half.toFixed(1)}`)}</title></rect>`);
      const cx = x + (barW - 2) / 2;
      parts.push(`<line x1="${cx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${y(Math.min(100, v.mean + v.half)).toFixed(1)}" y2="${y(Math.max(lo, v.mean - v.half)).toFixed(1)}" stroke="#333"/>`);
    });
    parts.push(`<text x="${(left + g * groupW + groupW / 2).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${esc(m.label + (m.better === 'lower' ? ' ↓' : ''))}</text>`);
  });
  systems.forEach((s, k) => {
    const x = left + (k % 4) * 170;
    const yy = top + plotH + 40 + Math.floor(k / 4) * 18;
    parts.push(`<rect x="${x}" y="${yy - 9}" width="10" height="10" fill="${COLORS[k % COLORS.length]}"/>`, `<text x="${x + 14}" y="${yy}">${esc(s)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export function chartFileName(s: SplitSummary): string {
  return `${s.suite}-${s.split}.svg`.replace(/[^a-zA-Z0-9_.-]+/g, '-');
}

/** Write report.md, results.json, conversations.jsonl and charts/*.svg; returns the files written. */
export function writeReport(dir: string, results: EvalResults): { files: string[]; markdown: string; summaries: SplitSummary[] } {
  const summaries = summarize(results);
  const markdown = markdownReport(results, summaries);
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  const files: string[] = [];
  const write = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    files.push(path.join(dir, name));
  };
  const charts = summaries.filter((s) => s.split !== 'all');
  write('report.md', `${markdown}\n${charts.map((s) => `![${s.suite} / ${s.split}](charts/${chartFileName(s)})`).join('\n')}\n`);
  const numbers = {
    meta: results.meta,
    systems: results.systems,
    metrics: results.metrics,
    summaries,
    conversations: results.conversations.map(({ transcript: _transcript, ...rest }: ConversationResult) => rest),
  };
  write('results.json', `${JSON.stringify(numbers, null, 1)}\n`);
  write('conversations.jsonl', results.conversations.map((c) => JSON.stringify({ suite: c.suite, scenario: c.scenario, seed: c.seed, system: c.system, profile: c.profile, ended: c.ended, transcript: c.transcript })).join('\n') + '\n');
  for (const s of charts) write(path.join('charts', chartFileName(s)), svgChart(s, results.metrics));
  return { files, markdown, summaries };
}
