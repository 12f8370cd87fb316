// Best-of-N in evaluation: a policy run as "<policy> (best-of-N)" has speakers that ask for N
// candidate turns and post the one the ranker scores highest: the Speaker with `candidates` and
// `ranker` exactly as serving configures it (src/reward/serve.ts, MASCOT_BEST_OF_N), with the persona
// reward model's ranker (RewardModels.ranker in src/reward/best-of-n.ts). There is no latency budget
// here: a budget would make the result depend on timing, and offline runs stay reproducible bit for
// bit. Every system runs on the same scenarios, seeds and people, so "<policy> (best-of-N)" and
// "<policy>" form pairs, and the report gives paired differences (best-of-N minus N=1).
//
// Each ranking is also recorded, to see why best-of-N helps or not:
//   switched     a later candidate scored strictly above the first (N=1 would have posted the first)
//   gain         reward(chosen) - reward(first), in the reward model's units (0 when not switched)
//   spread       max - min reward over the candidates
//   similarity   mean pairwise cosine of the candidates' content words (1: the same words)
import type { Ranker } from '../speaker/speaker.ts';
import type { ConversationResult, EvalResults } from './runner.ts';
import { interval, type Interval } from './stats.ts';
import { cosine, termVector } from './text.ts';

export const MAX_BEST_OF = 16;

export interface BestOfNPlan {
  /** Candidate counts (each at least 2): one system per size and policy. */
  sizes: number[];
  /** The policies that get best-of variants (default: every policy of the plan). */
  policies?: string[];
  /** The ranker for a pack's speakers; throws when the pack has no reward model. */
  ranker: (packId: string) => Ranker;
  /** What ranks, for the report. */
  rankerName: string;
}

/** Totals over one conversation's rankings (sums, so they pool over conversations). */
export interface BestOfNStats {
  n: number;
  /** Rankings (turns with at least two candidates). */
  ranked: number;
  /** Turns written with a single candidate (the voice had no second one to offer). */
  single: number;
  candidates: number;
  switched: number;
  gain: number;
  spread: number;
  similarity: number;
}

export function bestOfName(policy: string, n: number): string {
  return `${policy} (best-of-${n})`;
}

/** Wraps a ranker to record what each ranking changed; the scores pass through untouched. */
export function recordingRanker(ranker: Ranker, n: number): { ranker: Ranker; stats: BestOfNStats } {
  const stats: BestOfNStats = { n, ranked: 0, single: 0, candidates: 0, switched: 0, gain: 0, spread: 0, similarity: 0 };
  return {
    stats,
    ranker: async (persona, transcript, candidates) => {
      const scores = await ranker(persona, transcript, candidates);
      const first = scores[0] ?? 0;
      const top = Math.max(...scores);
      stats.ranked++;
      stats.candidates += candidates.length;
      if (top > first) {
        stats.switched++;
        stats.gain += top - first;
      }
      stats.spread += top - Math.min(...scores);
      stats.similarity += meanPairwiseSimilarity(candidates);
      return scores;
    },
  };
}

function meanPairwiseSimilarity(texts: readonly string[]): number {
  const vectors = texts.map(termVector);
  let sum = 0;
  let pairs = 0;
  for (let i = 0; i < vectors.length; i++)
    for (let j = i + 1; j < vectors.length; j++) {
      sum += cosine(vectors[i]!, vectors[j]!);
      pairs++;
    }
  return pairs > 0 ? sum / pairs : 1;
}

export interface BestOfNComparison {
  suite: string;
  split: string;
  system: string;
  base: string;
  /** Paired conversations. */
  pairs: number;
  /** Metric key -> paired difference (best-of-N minus N=1), mean and 95% interval. */
  deltas: Record<string, Interval | null>;
  /** How often a later candidate won, and the mean reward gain and spread per ranking. */
  switchedShare: number;
  gainPerRanking: number;
  spreadPerRanking: number;
  candidateSimilarity: number;
  candidatesPerRanking: number;
  /** Share of the best-of system's turns that were ranked at all. */
  rankedShare: number;
}

/** Metrics compared between a best-of system and its N=1 policy. */
export const COMPARED_METRICS = ['fidelity', 'fidelityCheck', 'relevance', 'originality', 'engagement', 'overall'] as const;

/** Paired comparisons per suite and split (and 'all') of every best-of system against its policy. */
export function compareBestOfN(results: EvalResults): BestOfNComparison[] {
  const plan = results.meta.bestOf;
  if (!plan) return [];
  const out: BestOfNComparison[] = [];
  const key = (c: ConversationResult) => `${c.suite}\u241f${c.scenario}\u241f${c.seed}`;
  for (const suite of results.meta.suites)
    for (const split of [...suite.splits, 'all'])
      for (const n of plan.sizes)
        for (const base of plan.policies) {
          const system = bestOfName(base, n);
          const inSplit = results.conversations.filter((c) => c.suite === suite.name && (split === 'all' || c.split === split));
          const baseByKey = new Map(inSplit.filter((c) => c.system === base).map((c) => [key(c), c]));
          const mine = inSplit.filter((c) => c.system === system);
          const deltas: Record<string, Interval | null> = {};
          for (const m of COMPARED_METRICS) {
            const diffs: number[] = [];
            for (const c of mine) {
              const a = c.metrics[m];
              const b = baseByKey.get(key(c))?.metrics[m];
              if (typeof a === 'number' && typeof b === 'number') diffs.push(a - b);
            }
            deltas[m] = interval(diffs);
          }
          const t = mine.reduce(
            (acc, c) => {
              const s = c.bestOf;
              if (s) for (const k of ['ranked', 'single', 'candidates', 'switched', 'gain', 'spread', 'similarity'] as const) acc[k] += s[k];
              return acc;
            },
            { ranked: 0, single: 0, candidates: 0, switched: 0, gain: 0, spread: 0, similarity: 0 },
          );
          const per = (x: number) => (t.ranked > 0 ? x / t.ranked : 0);
          out.push({
            suite: suite.name,
            split,
            system,
            base,
            pairs: mine.filter((c) => baseByKey.has(key(c))).length,
            deltas,
            switchedShare: per(t.switched),
            gainPerRanking: per(t.gain),
            spreadPerRanking: per(t.spread),
            candidateSimilarity: per(t.similarity),
            candidatesPerRanking: per(t.candidates),
            rankedShare: t.ranked + t.single > 0 ? t.ranked / (t.ranked + t.single) : 0,
          });
        }
  return out;
}

/** The report's best-of-N section: one table per suite. */
export function bestOfNMarkdown(results: EvalResults): string[] {
  const rows = compareBestOfN(results);
  if (rows.length === 0) return [];
  const plan = results.meta.bestOf!;
  const hasCheck = results.metrics.some((m) => m.key === 'fidelityCheck');
  const shown = COMPARED_METRICS.filter((m) => m !== 'fidelityCheck' || hasCheck);
  const label = (m: string) => results.metrics.find((x) => x.key === m)?.label ?? m;
  const d = (v: Interval | null | undefined) => (v ? `${v.mean >= 0 ? '+' : ''}${v.mean.toFixed(1)} ± ${v.half.toFixed(1)}` : 'n/a');
  const lines = [
    '',
    '## Best-of-N against N=1',
    '',
    `Speakers of a best-of-N system ask for N candidate turns and post the one ranked highest by ${plan.ranker},`,
    'as MASCOT_BEST_OF_N does in serving (without its latency budget). Each cell is the mean paired difference,',
    'best-of-N minus the same policy with N=1 on the same scenario, seed and person, ± the half-width of its 95% interval.',
    'Later wins: share of rankings where a later candidate scored above the first (N=1 posts the first); gain and spread:',
    "mean reward of the chosen minus the first candidate, and max minus min reward, in the model's units; similarity: mean",
    "pairwise cosine of the candidates' content words; ranked: share of turns that had two or more candidates to rank.",
  ];
  for (const suite of results.meta.suites) {
    const mine = rows.filter((r) => r.suite === suite.name);
    lines.push(
      '',
      `### ${suite.name}`,
      '',
      `| Split | System | Pairs | ${shown.map((m) => `Δ ${label(m)}`).join(' | ')} | Later wins | Gain | Spread | Similarity | Candidates | Ranked |`,
      `|---|---|---:|${shown.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|---:|`,
      ...mine.map(
        (r) =>
          `| ${r.split} | ${r.system} | ${r.pairs} | ${shown.map((m) => d(r.deltas[m])).join(' | ')} | ${pct(r.switchedShare)} | ${r.gainPerRanking.toFixed(3)} | ${r.spreadPerRanking.toFixed(3)} | ${r.candidateSimilarity.toFixed(2)} | ${r.candidatesPerRanking.toFixed(2)} | ${pct(r.rankedShare)} |`,
      ),
    );
  }
  return lines;
}

function pct(x: number): string {
  return `${(100 * x).toFixed(0)}%`;
}
