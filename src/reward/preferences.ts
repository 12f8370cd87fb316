// Preference data for the persona reward model, from every source the product has, each labelled:
//   judge           K candidate turns per persona from the generator (the OpenAI-compatible `n`),
//                   scored by an LLM judge on the rubric; pairs whose mean scores differ by >= margin
//   offline-rubric  the same with the offline voice writing and the offline rubric scorer judging
//   examples        a persona's own few-shot example against the other personas' examples, placed in
//                   the same context (a cheap offline bootstrap)
//   feedback/rating 👍/👎 and moderator ratings on logged persona turns (see store.ts)
// With `cross` on (the default) each persona's judged set also holds one candidate of every other
// persona for the same context, so the judge sees what this persona should not sound like.
import type { Directive, Turn } from '../core/types.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import { loadSuite, type Scenario } from '../sim/scenario.ts';
import type { Speaker } from '../speaker/speaker.ts';
import type { Judge } from './judge.ts';
import { OFFLINE_RUBRIC } from './offline-rubric.ts';
import { contextKey, meanScore, toTranscript, type AuthoredTurn, type ContextTurn, type PreferencePair, type PreferenceSource, type RubricScores } from './rubric.ts';

export const DEFAULT_MIN_MARGIN = 0.5;

/** A context to write candidates for, and whose words it holds. */
export interface CandidateContext {
  context: ContextTurn[];
  channelKey?: string;
  people: string[];
}

export interface ScoredCandidate {
  personaId: string;
  /** Persona that wrote it (differs from personaId for cross candidates). */
  authorId: string;
  strategy: string;
  text: string;
  scores: RubricScores;
  mean: number;
  rationale?: string;
}

// --- the offline bootstrap from persona examples ---------------------------------------------------

/** Each persona's examples against the other personas' examples in the same context. */
export function examplePreferences(pack: Pack): { pairs: PreferencePair[]; authored: AuthoredTurn[] } {
  const pairs: PreferencePair[] = [];
  const authored: AuthoredTurn[] = [];
  for (const persona of pack.personas) {
    for (const ex of persona.examples) {
      const context: ContextTurn[] = [{ name: 'Someone', text: ex.context.trim(), isBot: false }];
      authored.push({ pack: pack.id, personaId: persona.id, context, text: ex.response.trim(), source: 'examples' });
      for (const other of pack.personas) {
        if (other.id === persona.id) continue;
        for (const otherEx of other.examples) {
          pairs.push({ pack: pack.id, personaId: persona.id, context, chosen: ex.response.trim(), rejected: otherEx.response.trim(), source: 'examples', people: [] });
        }
      }
    }
  }
  return { pairs, authored };
}

// --- contexts ---------------------------------------------------------------------------------------

/** The persona examples' contexts (one human line each). */
export function exampleContexts(pack: Pack): CandidateContext[] {
  const seen = new Set<string>();
  const out: CandidateContext[] = [];
  for (const p of pack.personas)
    for (const ex of p.examples) {
      const context: ContextTurn[] = [{ name: 'Someone', text: ex.context.trim(), isBot: false }];
      if (!seen.has(contextKey(context))) out.push({ context, people: [] }), seen.add(contextKey(context));
    }
  return out;
}

/** Simulated contexts from a scenario suite: the opening, and the opening followed by what comes next. */
export function scenarioContexts(suiteNameOrPath: string): CandidateContext[] {
  const suite = loadSuite(suiteNameOrPath);
  return suite.scenarios.flatMap((s) => contextsOfScenario(s));
}

function contextsOfScenario(s: Scenario): CandidateContext[] {
  if (s.kind === 'support') {
    const person = 'Sam';
    const opening: ContextTurn = { name: person, text: s.opening, isBot: false };
    return [[opening], ...s.shares.slice(0, 2).map((share) => [opening, { name: person, text: share, isBot: false }])].map((context) => ({ context, people: [] }));
  }
  const [chair, ...rest] = s.participants;
  const opening: ContextTurn = { name: chair!.name, text: s.opening, isBot: false };
  const positions = rest.map((p) => ({ name: p.name, text: p.position, isBot: false }));
  return [[opening], [opening, ...positions.slice(0, 1)], [opening, ...positions.slice(0, 2), { name: rest[0]?.name ?? chair!.name, text: rest[0]?.concern ?? chair!.concern, isBot: false }]].map(
    (context) => ({ context, people: [] }),
  );
}

// --- judged candidates --------------------------------------------------------------------------------

/** Every ordered pair (better, worse) whose mean scores differ by at least `minMargin`. */
export function pairsFromScores(candidates: readonly ScoredCandidate[], minMargin: number): [ScoredCandidate, ScoredCandidate][] {
  const out: [ScoredCandidate, ScoredCandidate][] = [];
  for (const a of candidates)
    for (const b of candidates) if (a !== b && a.text !== b.text && a.mean - b.mean >= minMargin) out.push([a, b]);
  return out;
}

export interface JudgeRunOptions {
  pack: Pack;
  contexts: readonly CandidateContext[];
  speaker: Speaker;
  judge: Judge;
  /** Candidates per persona and context. */
  k: number;
  minMargin?: number;
  cross?: boolean;
  /** Distinguishes this run's offline-voice sessions (the voice never repeats itself in one). */
  runId: string;
  signal?: AbortSignal;
  /** Called after each (context, persona) with what it produced, so callers can store as they go. */
  onJudged?: (result: JudgedSet) => void;
}

export interface JudgedSet {
  pack: string;
  personaId: string;
  context: CandidateContext;
  candidates: ScoredCandidate[];
  pairs: PreferencePair[];
  authored: AuthoredTurn[];
  generator: string;
  judge: string;
}

export interface JudgeRunResult {
  sets: JudgedSet[];
  failures: { contextKey: string; personaId: string; error: string }[];
}

/** Write K candidates per persona for each context, judge them per persona, keep pairs with a margin. */
export async function judgeContexts(options: JudgeRunOptions): Promise<JudgeRunResult> {
  const { pack, speaker, judge, k } = options;
  const minMargin = options.minMargin ?? DEFAULT_MIN_MARGIN;
  const source: PreferenceSource = judge.name === OFFLINE_RUBRIC ? 'offline-rubric' : 'judge';
  const result: JudgeRunResult = { sets: [], failures: [] };
  for (const ctx of options.contexts) {
    const key = contextKey(ctx.context);
    const transcript = toTranscript(ctx.context);
    const drafts = new Map<string, { text: string; strategy: string }[]>();
    let generator = speaker.generator.name;
    for (const persona of pack.personas) {
      try {
        const { texts, offline } = await draftForPersona(speaker, pack, persona, transcript, k, `${options.runId}:${key}`, options.signal);
        if (offline) generator = 'offline-voice';
        drafts.set(persona.id, texts);
      } catch (err) {
        if (options.signal?.aborted) throw err;
        result.failures.push({ contextKey: key, personaId: persona.id, error: `writing candidates: ${(err as Error).message}` });
      }
    }
    for (const persona of pack.personas) {
      const own = drafts.get(persona.id);
      if (!own || own.length === 0) continue;
      const pool = own.map((d) => ({ ...d, authorId: persona.id }));
      if (options.cross !== false)
        for (const [other, texts] of drafts) if (other !== persona.id && texts[0]) pool.push({ ...texts[0], authorId: other });
      try {
        const judged = await judge.score({ pack, persona, context: ctx.context, candidates: pool.map((c) => c.text), signal: options.signal });
        const candidates: ScoredCandidate[] = pool.map((c, i) => ({
          personaId: persona.id,
          authorId: c.authorId,
          strategy: c.strategy,
          text: c.text,
          scores: judged[i]!.scores,
          mean: meanScore(judged[i]!.scores),
          ...(judged[i]!.rationale ? { rationale: judged[i]!.rationale } : {}),
        }));
        const pairs = pairsFromScores(candidates, minMargin).map(([w, l]): PreferencePair => ({
          pack: pack.id,
          personaId: persona.id,
          context: ctx.context,
          chosen: w.text,
          rejected: l.text,
          chosenScore: w.mean,
          rejectedScore: l.mean,
          source,
          judge: judge.name,
          ...(ctx.channelKey ? { channelKey: ctx.channelKey } : {}),
          people: ctx.people,
        }));
        const authored = own.map((d): AuthoredTurn => ({ pack: pack.id, personaId: persona.id, context: ctx.context, text: d.text, source }));
        const set: JudgedSet = { pack: pack.id, personaId: persona.id, context: ctx, candidates, pairs, authored, generator, judge: judge.name };
        result.sets.push(set);
        options.onJudged?.(set);
      } catch (err) {
        if (options.signal?.aborted) throw err;
        result.failures.push({ contextKey: key, personaId: persona.id, error: `judging: ${(err as Error).message}` });
      }
    }
  }
  return result;
}

/** K candidates for one persona, spread over its strategies (one generator call per strategy used). */
async function draftForPersona(
  speaker: Speaker,
  pack: Pack,
  persona: Persona,
  transcript: Turn[],
  k: number,
  session: string,
  signal?: AbortSignal,
): Promise<{ texts: { text: string; strategy: string }[]; offline: boolean }> {
  const strategies = persona.strategies.slice(0, Math.max(1, Math.min(k, persona.strategies.length)));
  const per = Math.ceil(k / strategies.length);
  const texts: { text: string; strategy: string }[] = [];
  let offline = false;
  for (const strategy of strategies) {
    const directive: Directive = { personaId: persona.id, strategy, instruction: pack.strategies[strategy]?.instruction ?? strategy };
    const out = await speaker.draft({ pack, persona, personas: pack.personas, directive, transcript, sessionKey: `${session}:${persona.id}:${strategy}`, signal }, per);
    offline ||= out.offline;
    for (const text of out.texts) if (!texts.some((t) => t.text === text)) texts.push({ text, strategy });
  }
  return { texts: texts.slice(0, k), offline };
}
