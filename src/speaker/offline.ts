// The offline voice: the built-in generator used when no model server is configured, and the
// frozen speaker of simulations. It is not a language model: it reads the human's last message
// with simple patterns (offline/reading.ts) and composes a turn from phrase banks written for each
// persona and strategy (offline/banks/), never repeating a sentence within a session. Every result
// carries `offline: true` so people always see that this voice, not a model, wrote it.
import { seedFrom, createRng } from '../util/rng.ts';
import type { GenerationRequest, GenerationResult, Generator } from './generator.ts';
import { MEETING_VOICES } from './offline/banks/meeting.ts';
import { NEUTRAL, UNKNOWN_STRATEGY } from './offline/banks/neutral.ts';
import { SUPPORT_VOICES } from './offline/banks/support.ts';
import { compose, type Cues, type Recipe } from './offline/compose.ts';
import { TOPICS } from './offline/lexicon.ts';
import { SessionMemory, type Earlier } from './offline/memory.ts';
import { readMessage, type Reading } from './offline/reading.ts';

export const OFFLINE_MODEL = 'offline-voice';

const VOICES: Record<string, Record<string, Recipe>> = { ...SUPPORT_VOICES, ...MEETING_VOICES };

/** Attempts per requested candidate before settling for fewer. */
const ATTEMPTS_PER_CANDIDATE = 6;
/** Rough characters per token, to honour `maxTokens` without a tokenizer. */
const CHARS_PER_TOKEN = 4;
/** Names that are placeholders, not a person's name ("You" in the console). */
const PLACEHOLDER_NAMES = new Set(['you', 'friend', 'team', 'user', 'human', 'someone', '']);

export interface OfflineGeneratorOptions {
  seed: number;
  /** Sessions remembered at once (least recently active forgotten first). */
  maxSessions?: number;
}

/** The recipe for a persona and strategy: its own voice, else strategy-only phrasing, else an honest line. */
function recipeFor(personaId: string, strategy: string): Recipe {
  return VOICES[personaId]?.[strategy] ?? NEUTRAL[strategy] ?? UNKNOWN_STRATEGY;
}

/** Human messages whose topics still colour a support turn. */
const TOPIC_WINDOW = 3;

/**
 * Slots and conditions for the templates. A support turn keeps the thread: topics carry over from
 * the last few messages, ranked after the current one's, and close people from the previous one
 * ("I can't sleep when he's away" still belongs to the move and the husband); feelings and
 * situations come from this message only. A meeting turn keeps the whole recent thread: decisions,
 * tasks, participants, and proposals not yet overtaken by a decision.
 */
function cuesFrom(reading: Reading, earlier: readonly Earlier[], humanName: string, strategy: string): Cues {
  const proper = PLACEHOLDER_NAMES.has(humanName.trim().toLowerCase()) ? undefined : humanName.trim();
  const before = [...earlier].reverse(); // most recent first
  const topics = [...new Set([...reading.topics, ...before.slice(0, TOPIC_WINDOW).flatMap((e) => e.reading.topics)])];
  const people = reading.people.length > 0 ? reading.people : (before[0]?.reading.people ?? []);
  const situations = [...reading.events, ...reading.circumstances];
  const [first, second] = reading.feelings;
  const close = people.find((p) => p.kind === 'partner' || p.kind === 'family' || p.kind === 'friend');

  const decisions = [...reading.decisions, ...before.flatMap((e) => e.reading.decisions)];
  // Proposals still open: this message's, and earlier ones made after the last decision.
  const lastDecided = before.findIndex((e) => e.reading.decisions.length > 0);
  const undecided = reading.decisions.length > 0 ? [] : before.slice(0, lastDecided === -1 ? undefined : lastDecided);
  const open = [...reading.proposals.map((p) => ({ text: p, by: humanName })), ...undecided.flatMap((e) => e.reading.proposals.map((p) => ({ text: p, by: e.speaker })))];
  const tasks = [...reading.tasks, ...before.flatMap((e) => e.reading.tasks)];
  const task = tasks.find((t) => t.owner) ?? tasks[0];
  const due = task?.due ?? reading.dates[0];
  const names = [...new Set([...reading.names, ...before.flatMap((e) => [e.speaker, ...e.reading.names])])].filter((n) => n !== humanName && !PLACEHOLDER_NAMES.has(n.toLowerCase()));
  const topic = topics.find((t) => TOPICS[t]);
  return {
    topics,
    family: first?.family,
    positive: reading.positive,
    slots: {
      humanName: proper,
      strategy: strategy.replace(/-/g, ' '),
      feeling: first?.adj,
      feelingSaid: first?.said,
      feelingNoun: first?.noun,
      feeling2Noun: second?.noun,
      event: reading.events[0],
      circumstance: reading.circumstances[0],
      situation: situations[0],
      situation2: situations[1],
      person: reading.people[0]?.phrase,
      close: close?.phrase,
      partner: people.find((p) => p.kind === 'partner')?.phrase,
      absolute: reading.absolutes[0],
      judgement: reading.selfJudgement,
      topic: topic ? TOPICS[topic]!.phrase : undefined,
      name: names[0],
      proposal: open[0]?.text,
      proposer: open[0] && !PLACEHOLDER_NAMES.has(open[0].by.toLowerCase()) ? open[0].by : undefined,
      decision: decisions[0],
      // Credit for a decision goes only to whoever stated it in this message.
      decider: reading.decisions.length > 0 ? proper : undefined,
      task: task?.action,
      owner: task?.owner === humanName ? (proper ?? 'you') : task?.owner,
      due,
      date: due?.replace(/^(?:by|before|on|until|due|no later than)\s+/i, ''),
      question: reading.question,
    },
  };
}

/** Drop trailing sentences beyond the token budget, keeping at least the first. */
function fit(text: string, maxTokens: number): string {
  const max = maxTokens * CHARS_PER_TOKEN;
  if (text.length <= max) return text;
  const sentences = text.split(/(?<=[.!?])\s+/);
  let out = sentences[0]!;
  for (const s of sentences.slice(1)) {
    if (out.length + 1 + s.length > max) break;
    out += ` ${s}`;
  }
  return out;
}

export class OfflineGenerator implements Generator {
  readonly name = 'offline';
  private readonly seed: number;
  private readonly memory: SessionMemory;

  constructor(options: OfflineGeneratorOptions) {
    this.seed = options.seed;
    this.memory = new SessionMemory(options.maxSessions);
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    request.signal?.throwIfAborted();
    // Yield once so a barge-in that lands in the same tick cancels this turn before it is remembered.
    await new Promise<void>((resolve) => setImmediate(resolve));
    request.signal?.throwIfAborted();

    const { context } = request;
    const session = this.memory.get(context.sessionKey);
    const rng = createRng(seedFrom(this.seed, context.sessionKey, session.turns, request.personaId, request.strategy, context.lastHumanText));
    const reading = readMessage(context.lastHumanText, context.humanName);
    const earlier = session.earlier.filter((e) => e.text !== context.lastHumanText);
    const cues = cuesFrom(reading, earlier, context.humanName, request.strategy);
    const recipe = recipeFor(request.personaId, request.strategy);

    const wanted = Math.max(1, Math.floor(request.n ?? 1));
    const used = new Set(session.sentences);
    const texts: string[] = [];
    const sentences: string[] = [];
    const templates: string[] = [];
    for (let attempt = 0; texts.length < wanted && attempt < wanted * ATTEMPTS_PER_CANDIDATE; attempt++) {
      const turn = compose(recipe, cues, { sentences: used, templates: session.templates, recent: context.recentBotTexts }, rng);
      if (!turn) continue;
      const text = fit(turn.text, request.maxTokens);
      if (texts.includes(text)) continue;
      texts.push(text);
      // Later candidates must differ sentence by sentence, and every candidate counts as said:
      // whichever one is posted, no sentence of it can come back later in the session.
      for (const s of turn.sentences) used.add(s);
      sentences.push(...turn.sentences);
      templates.push(...turn.templates);
    }
    this.memory.remember(session, { text: context.lastHumanText, speaker: context.humanName, reading }, sentences, templates);
    // Nothing fresh left to say: an empty text, which the engine treats as no turn.
    return { texts: texts.length > 0 ? texts : [''], offline: true, model: OFFLINE_MODEL };
  }
}
