import { describe, expect, it } from 'vitest';
import { loadPacks } from '../src/persona/loader.ts';
import type { GenerationRequest } from '../src/speaker/generator.ts';
import { OfflineGenerator, OFFLINE_MODEL } from '../src/speaker/offline.ts';
import { normaliseSentence, splitSentences } from '../src/speaker/offline/compose.ts';
import { readMessage } from '../src/speaker/offline/reading.ts';

const LONELY = 'I moved abroad and feel so alone since my husband travels for work';

function request(personaId: string, strategy: string, lastHumanText: string, over: Partial<GenerationRequest> & { sessionKey?: string; recent?: string[]; humanName?: string } = {}): GenerationRequest {
  const { sessionKey = 'session', recent = [], humanName = 'Mia', ...rest } = over;
  return {
    personaId,
    strategy,
    messages: [],
    temperature: 0.7,
    maxTokens: 220,
    context: { sessionKey, humanName, lastHumanText, recentBotTexts: recent },
    ...rest,
  };
}

async function say(gen: OfflineGenerator, personaId: string, strategy: string, text: string, over: Parameters<typeof request>[3] = {}): Promise<string> {
  const result = await gen.generate(request(personaId, strategy, text, over));
  return result.texts[0]!;
}

const packs = loadPacks();
const supportPairs = packs.get('support')!.personas.flatMap((p) => p.strategies.map((s) => [p.id, s] as const));
const meetingPairs = packs.get('meeting')!.personas.flatMap((p) => p.strategies.map((s) => [p.id, s] as const));

/** A support conversation that moves on, as a newcomer's would. */
const CONVERSATION = [
  LONELY,
  "It's worst in the evenings when the flat is quiet",
  "I don't really know anyone here yet",
  'My mum keeps asking when we are coming home and I feel guilty',
  "I'm tired of pretending everything is fine on calls with my friends back home",
  'Work is okay but my colleagues all go home to their families',
  'I tried a yoga class once but nobody talked to me',
  'Maybe I am just bad at making friends',
  "I can't sleep when he is away",
  'I miss speaking my own language',
  'Sometimes I wonder if moving here was a mistake',
  'My husband says it will get easier but he is never here',
  'I feel invisible at the shops because I cannot speak well',
  "I'm scared this is how it will always be",
  'Today I said hi to a neighbour and it felt good',
  'I want to feel at home somewhere again',
  'My sister visited last month and it was amazing',
  'I get so anxious before phone calls in the local language',
  'I think I need a routine',
  'Thanks for listening, it helps a bit',
];

/** Two bot turns per human message, cycling through every persona and strategy of the pack. */
async function session(gen: OfflineGenerator, messages: string[], pairs: readonly (readonly [string, string])[], sessionKey: string): Promise<string[]> {
  const turns: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    for (let k = 0; k < 2; k++) {
      const [personaId, strategy] = pairs[(2 * i + k) % pairs.length]!;
      turns.push(await say(gen, personaId, strategy, messages[i]!, { sessionKey, recent: turns.filter(Boolean).slice(-4) }));
    }
  }
  return turns;
}

function repeatedSentences(turns: string[]): string[] {
  const seen = new Set<string>();
  const repeats: string[] = [];
  for (const t of turns)
    for (const s of splitSentences(t)) {
      const key = normaliseSentence(s);
      if (seen.has(key)) repeats.push(s);
      seen.add(key);
    }
  return repeats;
}

describe('offline voice', () => {
  it('labels what it writes as the offline voice', async () => {
    const result = await new OfflineGenerator({ seed: 1 }).generate(request('anchor', 'reflection', LONELY));
    expect(result.offline).toBe(true);
    expect(result.model).toBe(OFFLINE_MODEL);
    expect(result.texts).toHaveLength(1);
    expect(result.texts[0]!.length).toBeGreaterThan(0);
  });

  it('is deterministic given the seed and the sequence of requests', async () => {
    const a = await session(new OfflineGenerator({ seed: 42 }), CONVERSATION.slice(0, 6), supportPairs, 's');
    const b = await session(new OfflineGenerator({ seed: 42 }), CONVERSATION.slice(0, 6), supportPairs, 's');
    const c = await session(new OfflineGenerator({ seed: 43 }), CONVERSATION.slice(0, 6), supportPairs, 's');
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('keeps sessions apart: one session does not change what another hears', async () => {
    const alone = new OfflineGenerator({ seed: 5 });
    const first = await say(alone, 'anchor', 'reflection', LONELY, { sessionKey: 'b' });
    const shared = new OfflineGenerator({ seed: 5 });
    await session(shared, CONVERSATION.slice(0, 4), supportPairs, 'a');
    expect(await say(shared, 'anchor', 'reflection', LONELY, { sessionKey: 'b' })).toBe(first);
  });

  it('writes different text for every persona and strategy of both packs', async () => {
    for (const [pairs, text] of [
      [supportPairs, LONELY],
      [meetingPairs, 'I think we should move the launch to March. Lee will write up the migration plan by Friday.'],
    ] as const) {
      const texts = await Promise.all(pairs.map(([p, s]) => say(new OfflineGenerator({ seed: 9 }), p, s, text)));
      expect(texts.every((t) => t.length > 0)).toBe(true);
      expect(new Set(texts).size).toBe(texts.length);
    }
  });

  it('answers in the human\'s own terms: their feeling, their situation, pronouns turned toward them', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const gen = new OfflineGenerator({ seed });
      const reflection = await say(gen, 'anchor', 'reflection', LONELY, { sessionKey: `r${seed}` });
      expect(reflection).toMatch(/alone|loneliness|far from home|abroad|husband/i);
      const restatement = await say(gen, 'anchor', 'restatement', LONELY, { sessionKey: `s${seed}` });
      expect(restatement).toMatch(/you moved abroad|your husband travels for work/);
      const question = await say(gen, 'catalyst', 'question', LONELY, { sessionKey: `q${seed}` });
      expect(question.split('?').length - 1).toBe(1);
      for (const t of [reflection, restatement, question]) expect(t).not.toMatch(/\bmy husband\b|\bI moved\b/);
    }
    const other = await say(new OfflineGenerator({ seed: 1 }), 'anchor', 'restatement', 'I got passed over for the promotion again and I am so frustrated');
    expect(other).toMatch(/you got passed over for the promotion again|so frustrated/);
  });

  it('fits good news instead of consoling it', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const gen = new OfflineGenerator({ seed });
      const text = await say(gen, 'anchor', 'reassurance', 'Today I said hi to a neighbour and it felt good');
      expect(text).toMatch(/good|glad|enjoy|light/i);
      expect(text).not.toMatch(/heavy|carry it|not alone|overreacting|shake/i);
    }
  });

  it('picks up names, decisions, owners and dates in a meeting', async () => {
    const gen = new OfflineGenerator({ seed: 3 });
    const planner = await say(gen, 'planner', 'action-item', 'Lee will write up the migration plan by Friday.', { sessionKey: 'm1', humanName: 'Dana' });
    expect(planner).toMatch(/Lee/);
    expect(planner).toMatch(/Friday/);
    const scribe = await say(gen, 'scribe', 'record-decision', 'OK, we agreed to go with vendor B.', { sessionKey: 'm2', humanName: 'Dana' });
    expect(scribe).toMatch(/^(Decision|Decision recorded|Logged as decided): go with vendor B/);
    const unowned = await say(gen, 'planner', 'action-item', 'Somebody should talk to legal about data retention.', { sessionKey: 'm3', humanName: 'Dana' });
    expect(unowned).toMatch(/talk to legal about data retention/);
    expect(unowned).toMatch(/who/i);
  });

  it('never says the same sentence twice in a 20-message session, and does not run dry', async () => {
    for (const seed of [1, 2, 3]) {
      const turns = await session(new OfflineGenerator({ seed }), CONVERSATION, supportPairs, 'long');
      expect(turns).toHaveLength(40);
      expect(repeatedSentences(turns)).toEqual([]);
      expect(turns.filter((t) => t === '')).toEqual([]);
      // Every voice asks at most one question per turn.
      expect(turns.filter((t) => t.split('?').length > 2)).toEqual([]);
    }
    const same = await session(new OfflineGenerator({ seed: 4 }), Array<string>(20).fill(LONELY), supportPairs, 'same');
    expect(repeatedSentences(same)).toEqual([]);
    expect(same.filter((t) => t === '').length).toBeLessThanOrEqual(2);
  });

  it('keeps a meeting thread: decisions, owners and open proposals carry over, nothing repeats', async () => {
    const thread: [string, string][] = [
      ['Dana', 'I think we should move the launch to March, QA needs more time.'],
      ['Kim', 'Can we keep February and ship a smaller scope?'],
      ['Lee', "OK, let's go with a February launch without reporting."],
      ['Kim', "I'll update the roadmap by Friday."],
      ['Dana', 'Now the vendor: vendor B is 30% cheaper than vendor A.'],
      ['Lee', 'We should check the migration cost before switching.'],
      ['Dana', 'Sam can take the legal question.'],
      ['Lee', "We're running out of time, let's wrap up."],
    ];
    const gen = new OfflineGenerator({ seed: 6 });
    const turns: string[] = [];
    for (const [i, [speaker, text]] of thread.entries()) {
      for (let k = 0; k < 2; k++) {
        const [personaId, strategy] = meetingPairs[(2 * i + k) % meetingPairs.length]!;
        turns.push(await say(gen, personaId, strategy, text, { sessionKey: 'thread', humanName: speaker, recent: turns.filter(Boolean).slice(-4) }));
      }
    }
    expect(repeatedSentences(turns)).toEqual([]);
    expect(turns.filter((t) => t === '').length).toBeLessThanOrEqual(1);
    expect(turns.filter((t) => t.split('?').length > 2)).toEqual([]);
    // Three messages after the decision, the scribe still records it, crediting nobody who did not state it.
    const record = await say(gen, 'scribe', 'record-decision', 'Where did we land?', { sessionKey: 'thread', humanName: 'Priya' });
    expect(record).toMatch(/go with a February launch without reporting/);
    expect(record).not.toMatch(/Priya/);
    // The decision closed the earlier proposals: nobody is asked again whether to move the launch to March.
    expect(turns.slice(6).join(' ')).not.toMatch(/move the launch to March/);
  });

  it('returns an empty text rather than repeat itself once a bank is used up', async () => {
    const gen = new OfflineGenerator({ seed: 11 });
    const turns: string[] = [];
    for (let i = 0; i < 150; i++) turns.push(await say(gen, 'catalyst', 'question', 'ok', { sessionKey: 'dry' }));
    const spoken = turns.filter(Boolean);
    expect(spoken.length).toBeGreaterThan(10);
    expect(spoken.length).toBeLessThan(turns.length);
    expect(repeatedSentences(spoken)).toEqual([]);
  });

  it('does not echo what another persona just said', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const first = await say(new OfflineGenerator({ seed }), 'anchor', 'reflection', LONELY, { sessionKey: 'x' });
      // Same seed, fresh session: only the recent bot turn can steer it away from the same words.
      const after = await say(new OfflineGenerator({ seed }), 'anchor', 'reflection', LONELY, { sessionKey: 'x', recent: [first] });
      expect(after.length).toBeGreaterThan(0);
      const said = new Set(splitSentences(first).map(normaliseSentence));
      expect(splitSentences(after).filter((s) => said.has(normaliseSentence(s)))).toEqual([]);
    }
  });

  it('returns n distinct candidates that share no sentence', async () => {
    const result = await new OfflineGenerator({ seed: 8 }).generate(request('guide', 'suggestion', LONELY, { n: 4 }));
    expect(result.texts).toHaveLength(4);
    expect(repeatedSentences(result.texts)).toEqual([]);
  });

  it('honours an abort signal and forgets the cancelled turn', async () => {
    const gen = new OfflineGenerator({ seed: 13 });
    const before = new AbortController();
    before.abort(new Error('barge-in'));
    await expect(gen.generate(request('anchor', 'reflection', LONELY, { signal: before.signal }))).rejects.toThrow('barge-in');

    const during = new AbortController();
    const pending = gen.generate(request('anchor', 'reflection', LONELY, { signal: during.signal }));
    during.abort(new Error('new human message'));
    await expect(pending).rejects.toThrow('new human message');

    // Neither cancelled turn used up anything: the next turn is what a fresh generator says first.
    const next = await say(gen, 'anchor', 'reflection', LONELY);
    expect(next).toBe(await say(new OfflineGenerator({ seed: 13 }), 'anchor', 'reflection', LONELY));
  });

  it('falls back to strategy-only phrasing for an unknown persona, and an honest line for an unknown strategy', async () => {
    const gen = new OfflineGenerator({ seed: 2 });
    const stranger = await say(gen, 'mentor', 'reflection', LONELY, { sessionKey: 'u1' });
    expect(stranger).toMatch(/alone|loneliness|weighing/);
    const unknown = await say(gen, 'anchor', 'interpretive-dance', LONELY, { sessionKey: 'u2' });
    expect(unknown).toMatch(/"interpretive dance"/);
    expect(unknown).toMatch(/offline/);
  });

  it('keeps a bounded memory of sessions', async () => {
    const gen = new OfflineGenerator({ seed: 17, maxSessions: 2 });
    const first = await say(gen, 'beacon', 'affirmation', LONELY, { sessionKey: 'one' });
    await say(gen, 'beacon', 'affirmation', LONELY, { sessionKey: 'two' });
    await say(gen, 'beacon', 'affirmation', LONELY, { sessionKey: 'three' });
    // "one" was the least recently active and has been forgotten: it starts over.
    expect(await say(gen, 'beacon', 'affirmation', LONELY, { sessionKey: 'one' })).toBe(first);
  });
});

describe('reading a message', () => {
  it('turns what happened toward the listener and tells events from circumstances', () => {
    const r = readMessage(LONELY, 'Mia');
    expect(r.events).toEqual(['you moved abroad']);
    expect(r.circumstances).toEqual(['your husband travels for work']);
    expect(r.people).toEqual([{ phrase: 'your husband', kind: 'partner' }]);
    expect(r.feelings.map((f) => f.said)).toEqual(['so alone']);
    expect(r.topics.slice(0, 2)).toEqual(['relocation', 'loneliness']);
    expect(readMessage('My husband and I argued last night', 'Mia').events).toEqual(['you and your husband argued last night']);
    expect(readMessage('I was fired and my older sister was furious', 'Mia').events).toEqual(['you were fired', 'your older sister was furious']);
  });

  it('keeps feelings that are negated, everyday or about someone else out', () => {
    expect(readMessage("I'm not happy and I don't feel lonely", 'Mia').feelings).toEqual([]);
    expect(readMessage('I lost my keys on the way down', 'Mia').feelings).toEqual([]);
    expect(readMessage('you guys are useless', 'Mia').feelings).toEqual([]);
    expect(readMessage('you guys are useless', 'Mia').topics).toContain('complaint');
  });

  it('never restates a harsh self-judgement as a fact', () => {
    const r = readMessage('Maybe I am just bad at making friends', 'Mia');
    expect(r.circumstances).toEqual([]);
    expect(r.selfJudgement).toBe('I am just bad at making friends');
  });

  it('tells good news from hard news', () => {
    expect(readMessage('Today I said hi to a neighbour and it felt good', 'Mia').positive).toBe(true);
    expect(readMessage('I got into my dream university!!!', 'Mia').positive).toBe(true);
    expect(readMessage('My grandpa passed away', 'Mia').positive).toBe(false);
    expect(readMessage('It was good until my boss yelled at me', 'Mia').positive).toBe(false);
  });

  it('finds proposals, decisions, owners and dates in a meeting message', () => {
    const r = readMessage("I'll send the notes tomorrow. Let's go with vendor B. What if we cut the reporting module? Sam can take the legal question.", 'Dana');
    expect(r.decisions).toEqual(['go with vendor B']);
    expect(r.proposals).toEqual(['cut the reporting module']);
    expect(r.tasks).toEqual([
      { owner: 'Dana', action: 'send the notes', due: 'tomorrow' },
      { owner: 'Sam', action: 'take the legal question', due: undefined },
    ]);
    expect(r.names).toEqual(['Sam']);
    expect(readMessage("Let's wrap up", 'Dana').proposals).toEqual([]);
    expect(readMessage('Who can take the notes?', 'Dana').tasks).toEqual([{ action: 'take the notes', due: undefined, owner: undefined }]);
    expect(readMessage('Does anyone know the budget?', 'Dana').tasks).toEqual([]);
  });
});
