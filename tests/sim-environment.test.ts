import { describe, expect, it } from 'vitest';
import { actionKey, type Action } from '../src/core/types.ts';
import { builtinPolicies } from '../src/director/registry.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { summarizeState } from '../src/session/engine.ts';
import { allowedActions, estimateNeeds, loggedStateSchema, rollout, startFromLogged, startStates } from '../src/sim/environment.ts';
import { loadSuite } from '../src/sim/scenario.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const meeting = packs.get('meeting')!;
const heuristic = builtinPolicies().get('heuristic')!;
const scenarios = loadSuite('support').scenarios.filter((s) => ['neg-lonely-abroad', 'pos-job-offer'].includes(s.id));

describe('director training environment', async () => {
  const starts = await startStates(support, scenarios, [1], { maxRounds: 4 });

  it('keeps the point before every director decision, with the state the policy saw', () => {
    expect(starts.length).toBeGreaterThan(6);
    expect(new Set(starts.map((s) => s.id)).size).toBe(starts.length);
    const first = starts[0]!;
    expect(first.state.human.text).toBe(scenarios[0]!.opening);
    expect(first.state.roundTurns).toEqual([]);
    expect(starts.some((s) => s.state.roundTurns.length === 1)).toBe(true); // second decisions of a round too
    for (const s of starts) expect(s.point.history.at(-1)!.messageId).toBe(s.state.transcript.at(-1)!.messageId);
  });

  it('rolls out deterministically given the seed, forcing the first action', async () => {
    const start = starts[2]!;
    const actions = allowedActions(start);
    expect(actions.map(actionKey)).toContain('yield');
    const speak = actions.find((a) => a.kind === 'speak')!;
    const a = await rollout(start, speak, { policy: heuristic, seed: 11 });
    const b = await rollout(start, speak, { policy: heuristic, seed: 11 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.turns[0]!.author.personaId).toBe(speak.kind === 'speak' ? speak.personaId : undefined);
    expect(a.turns[0]!.strategy).toBe(speak.kind === 'speak' ? speak.strategy : undefined);
    // The block ends with the person's reaction and holds at least blockTurns turns.
    expect(a.turns.at(-1)!.author.isBot).toBe(false);
    expect(a.turns.length).toBeGreaterThanOrEqual(3);
    expect(a.reward).toBe(a.breakdown.total);
    // The start is not consumed: the person there is unchanged by rollouts.
    const again = await rollout(start, speak, { policy: heuristic, seed: 11 });
    expect(again.reward).toBe(a.reward);
  });

  it('scores different first actions differently', async () => {
    const start = starts[0]!;
    const rewards = await Promise.all(allowedActions(start).map((a) => rollout(start, a, { policy: heuristic, seed: 3 }).then((r) => r.reward)));
    expect(new Set(rewards.map((r) => r.toFixed(6))).size).toBeGreaterThan(3);
  });

  it('lets the yield action hand the floor to the person first', async () => {
    const start = starts.find((s) => s.state.roundTurns.length === 0)!;
    const r = await rollout(start, { kind: 'yield' }, { policy: heuristic, seed: 2, blockTurns: 1 });
    expect(r.turns[0]!.author.isBot).toBe(false);
    expect(r.breakdown.fidelity).toBeNull();
  });

  it('refuses an action the director may not take there', async () => {
    const start = starts.find((s) => s.state.roundTurns.length === 1)!;
    const last = start.state.roundTurns[0]!;
    const persona = support.personas.find((p) => p.id === last.personaId)!;
    const again: Action = { kind: 'speak', personaId: persona.id, strategy: persona.strategies[0]! };
    await expect(rollout(start, again, { policy: heuristic, seed: 1 })).rejects.toThrow(/not allowed in this state/);
    await expect(rollout(start, { kind: 'speak', personaId: 'nobody', strategy: 'x' }, { policy: heuristic, seed: 1 })).rejects.toThrow(/not in the action space/);
  });

  it('builds a start from a logged decision state', async () => {
    const source = starts.find((s) => s.state.roundTurns.length === 1)!;
    const logged = JSON.parse(JSON.stringify(summarizeState(source.state)));
    const start = startFromLogged(support, JSON.stringify(logged), { id: 'decision-42' });
    expect(start.id).toBe('decision-42');
    expect(start.source).toBe('log');
    expect(summarizeState(start.state)).toEqual(logged);
    const r = await rollout(start, { kind: 'yield' }, { policy: heuristic, seed: 5 });
    expect(r.turns.length).toBeGreaterThan(0);
    expect(Number.isFinite(r.reward)).toBe(true);
  });

  it('rejects a malformed logged state naming the field', () => {
    const logged = summarizeState(starts[0]!.state) as Record<string, unknown>;
    expect(() => startFromLogged(support, { ...logged, humanTurnCount: 'two' }, { id: 'd7' })).toThrow(/logged state d7: humanTurnCount:/);
    expect(() => startFromLogged(meeting, logged)).toThrow(/personas: "anchor" is not a persona of pack "meeting"/);
  });

  it('estimates a logged person\'s needs from what was said and done', () => {
    const base = loggedStateSchema.parse(summarizeState(starts[0]!.state));
    const calm = estimateNeeds(support, { ...base, human: 'I am thinking about a new hobby.', sessionStrategies: [] });
    const distressed = estimateNeeds(support, { ...base, human: 'I feel so alone and hopeless and scared.', sessionStrategies: [] });
    const heard = estimateNeeds(support, { ...base, human: 'I feel so alone and hopeless and scared.', sessionStrategies: ['reflection', 'reassurance'] });
    expect(distressed.explore).toBeGreaterThan(calm.explore);
    expect(heard.explore).toBeCloseTo(distressed.explore - 0.5, 12);
    expect(estimateNeeds(support, { ...base, human: 'What should I do?', sessionStrategies: [] }).action).toBeGreaterThan(calm.action);
  });
});
