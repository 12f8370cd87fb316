import { describe, expect, it } from 'vitest';
import { parseActionKey, type Turn } from '../src/core/types.ts';
import { actionSpace, applyFloor } from '../src/director/actions.ts';
import type { DirectorState } from '../src/director/policy.ts';
import { builtinPolicies } from '../src/director/registry.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { createRng } from '../src/util/rng.ts';

const packs = loadPacks();
const support = packs.get('support')!;

function turn(text: string, personaId?: string, strategy?: string): Turn {
  return {
    messageId: Math.random().toString(36),
    author: personaId ? { id: personaId, name: personaId, isBot: true, personaId } : { id: 'u', name: 'Sam', isBot: false },
    text,
    at: 0,
    ...(strategy ? { strategy } : {}),
  };
}

function state(text: string, extra: Partial<DirectorState> = {}): DirectorState {
  const human = turn(text);
  return {
    pack: support,
    personas: support.personas,
    transcript: [human],
    human,
    roundTurns: [],
    sessionStrategies: [],
    humanTurnCount: 1,
    mentions: [],
    maxBotTurns: 2,
    floor: 0.01,
    ...extra,
  };
}

const policies = [...builtinPolicies().values()];

describe.each(policies.map((p) => [p.id, p] as const))('%s policy', (_id, policy) => {
  it('returns a distribution over every slot that sums to 1 and keeps the floor on allowed actions', async () => {
    const rng = createRng(3);
    for (const text of ['I moved abroad and feel so alone', 'What should I do about my boss?', 'thanks, that helps']) {
      const d = await policy.decide(state(text), rng);
      expect(d.actions).toEqual(actionSpace(support));
      expect(d.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      for (const p of d.probabilities) expect(p).toBeGreaterThanOrEqual(0.01 - 1e-12);
      expect(d.propensity).toBe(d.probabilities[d.actions.indexOf(d.action.kind === 'yield' ? 'yield' : `${d.action.personaId}:${d.action.strategy}`)]);
      expect(d.policyId).toBe(policy.id);
    }
  });

  it('gives zero probability to masked actions: the last speaker, disabled personas, others in a 1:1', async () => {
    const rng = createRng(5);
    const s = state('I keep thinking about it.', {
      personas: support.personas.filter((p) => p.id !== 'beacon'),
      roundTurns: [{ personaId: 'anchor', strategy: 'reflection' }],
      transcript: [turn('I keep thinking about it.'), turn('That sounds heavy.', 'anchor', 'reflection')],
    });
    const d = await policy.decide(s, rng);
    d.actions.forEach((key, i) => {
      const a = parseActionKey(key);
      if (a.kind === 'speak' && (a.personaId === 'anchor' || a.personaId === 'beacon')) expect(d.probabilities[i]).toBe(0);
    });

    const dm = await policy.decide(state('hi guide', { directPersonaId: 'guide' }), rng);
    dm.actions.forEach((key, i) => {
      const a = parseActionKey(key);
      if (a.kind === 'speak' && a.personaId !== 'guide') expect(dm.probabilities[i]).toBe(0);
    });
  });
});

describe('heuristic director', () => {
  const heuristic = builtinPolicies().get('heuristic')!;
  const mass = (d: { actions: string[]; probabilities: number[] }, pred: (key: string) => boolean) =>
    d.actions.reduce((sum, key, i) => sum + (pred(key) ? d.probabilities[i]! : 0), 0);

  it('puts a named persona first', async () => {
    const d = await heuristic.decide(state('Catalyst, is it silly to feel this way?', { mentions: ['catalyst'] }), createRng(1));
    expect(mass(d, (k) => k.startsWith('catalyst:'))).toBeGreaterThan(0.8);
  });

  it('validates before suggesting when distress is high, and suggests when asked for advice', async () => {
    const distressed = await heuristic.decide(state('I feel hopeless and so alone, I cried all night'), createRng(1));
    const explore = ['reflection', 'restatement', 'reassurance'];
    expect(mass(distressed, (k) => explore.some((s) => k.endsWith(`:${s}`)))).toBeGreaterThan(0.7);

    const advice = await heuristic.decide(
      state('ok, I feel calmer now. What should I do next about the job search?', { sessionStrategies: ['reflection', 'question', 'affirmation'], humanTurnCount: 3 }),
      createRng(1),
    );
    expect(mass(advice, (k) => k.startsWith('guide:'))).toBeGreaterThan(0.5);
  });

  it('moves the second turn of a round to the next phase and yields once the round is covered', async () => {
    const s = state('I moved abroad and feel so alone since my husband travels for work', {
      roundTurns: [{ personaId: 'anchor', strategy: 'reflection' }],
    });
    const second = await heuristic.decide(s, createRng(1));
    expect(mass(second, (k) => k.endsWith(':question') || k.endsWith(':reframing') || k.endsWith(':affirmation'))).toBeGreaterThan(0.6);

    const third = await heuristic.decide(
      { ...s, maxBotTurns: 4, roundTurns: [...s.roundTurns, { personaId: 'catalyst', strategy: 'question' }] },
      createRng(1),
    );
    expect(mass(third, (k) => k === 'yield')).toBeGreaterThan(0.7);
  });

  it('yields at once when the person asks for space', async () => {
    const d = await heuristic.decide(state('please stop, just listen for a minute'), createRng(1));
    expect(mass(d, (k) => k === 'yield')).toBeGreaterThan(0.5);
  });
});

describe('floor mixing', () => {
  it('keeps every allowed slot at or above the floor and masked slots at zero', () => {
    const p = applyFloor([1, 0, 0, 0.5], [true, true, false, true], 0.05);
    expect(p[2]).toBe(0);
    expect(Math.min(p[0]!, p[1]!, p[3]!)).toBeGreaterThanOrEqual(0.05);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });
});
