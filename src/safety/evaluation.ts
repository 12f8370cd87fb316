// Evaluation of crisis detection on a labelled JSONL set: recall on crisis messages and the
// false-positive rates on ordinary distress and on everything else, with Wilson score intervals
// (small sets make wide intervals; the report shows them rather than hiding them).
//
//   recall  = crisis messages labelled crisis / crisis messages
//   FP rate = non-crisis messages labelled crisis / non-crisis messages (per label)
//   Wilson 95%: (p + z^2/2n +- z * sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.96

export const SET_LABELS = ['crisis', 'distress', 'other'] as const;
export type SetLabel = (typeof SET_LABELS)[number];

export interface LabelledExample {
  text: string;
  label: SetLabel;
  category?: string;
  /** 1-based line in the file. */
  line: number;
}

export interface ParsedSet {
  examples: LabelledExample[];
  /** One line per invalid line: "file:line: what is wrong". */
  problems: string[];
}

/** Parse JSONL; invalid lines are reported and skipped, valid ones are all kept. */
export function parseLabelledSet(text: string, file: string): ParsedSet {
  const examples: LabelledExample[] = [];
  const problems: string[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      problems.push(`${file}:${line}: not valid JSON (${(err as Error).message.slice(0, 80)})`);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${file}:${line}: expected an object like {"text": "...", "label": "crisis"}`);
      return;
    }
    const o = value as Record<string, unknown>;
    if (typeof o.text !== 'string' || o.text.trim() === '') {
      problems.push(`${file}:${line}: "text" must be a non-empty string`);
      return;
    }
    if (typeof o.label !== 'string' || !(SET_LABELS as readonly string[]).includes(o.label)) {
      problems.push(`${file}:${line}: "label" must be one of ${SET_LABELS.join(', ')} (got ${JSON.stringify(o.label)?.slice(0, 40) ?? 'nothing'})`);
      return;
    }
    if (o.category !== undefined && typeof o.category !== 'string') {
      problems.push(`${file}:${line}: "category" must be a string when given`);
      return;
    }
    examples.push({ text: o.text, label: o.label as SetLabel, ...(typeof o.category === 'string' && o.category ? { category: o.category } : {}), line });
  });
  return { examples, problems };
}

export interface Rate {
  value: number;
  hits: number;
  of: number;
  /** Wilson score interval, 95%. */
  low: number;
  high: number;
}

export interface Evaluation {
  total: number;
  counts: Record<SetLabel, number>;
  recall: Rate;
  fpDistress: Rate;
  fpOther: Rate;
  fpAll: Rate;
  recallByCategory: Record<string, Rate>;
  misses: LabelledExample[];
  falsePositives: (LabelledExample & { patterns: string[] })[];
}

export function rate(hits: number, of: number): Rate {
  if (of === 0) return { value: 0, hits, of, low: 0, high: 1 };
  const z = 1.96;
  const p = hits / of;
  const denom = 1 + (z * z) / of;
  const centre = p + (z * z) / (2 * of);
  const spread = z * Math.sqrt((p * (1 - p)) / of + (z * z) / (4 * of * of));
  return { value: p, hits, of, low: Math.max(0, (centre - spread) / denom), high: Math.min(1, (centre + spread) / denom) };
}

type Verdict = { label: 'crisis' | 'ok'; patterns: string[] };

export async function evaluate(examples: readonly LabelledExample[], classify: (text: string) => Verdict | Promise<Verdict>): Promise<Evaluation> {
  const counts: Record<SetLabel, number> = { crisis: 0, distress: 0, other: 0 };
  const flagged: Record<SetLabel, number> = { crisis: 0, distress: 0, other: 0 };
  const byCategory = new Map<string, { hits: number; of: number }>();
  const misses: LabelledExample[] = [];
  const falsePositives: Evaluation['falsePositives'] = [];
  for (const ex of examples) {
    const v = await classify(ex.text);
    counts[ex.label]++;
    const hit = v.label === 'crisis';
    if (hit) flagged[ex.label]++;
    if (ex.label === 'crisis') {
      const c = byCategory.get(ex.category ?? 'uncategorised') ?? { hits: 0, of: 0 };
      c.of++;
      if (hit) c.hits++;
      else misses.push(ex);
      byCategory.set(ex.category ?? 'uncategorised', c);
    } else if (hit) falsePositives.push({ ...ex, patterns: v.patterns });
  }
  return {
    total: examples.length,
    counts,
    recall: rate(flagged.crisis, counts.crisis),
    fpDistress: rate(flagged.distress, counts.distress),
    fpOther: rate(flagged.other, counts.other),
    fpAll: rate(flagged.distress + flagged.other, counts.distress + counts.other),
    recallByCategory: Object.fromEntries([...byCategory].map(([c, r]) => [c, rate(r.hits, r.of)])),
    misses,
    falsePositives,
  };
}
