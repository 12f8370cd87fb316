import { describe, expect, it } from 'vitest';
import type { Turn } from '../src/core/types.ts';
import { DEFAULT_REWARD_WEIGHTS, groupReward, overTalkPenalty, parseRewardWeights, rewardWeightsFromEnv, roleStrategyFidelity } from '../src/eval/group-reward.ts';
import { loadPacks } from '../src/persona/loader.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const meeting = packs.get('meeting')!;
const persona = (pack: typeof support, id: string) => pack.personas.find((p) => p.id === id)!;

let n = 0;
const human = (text: string, name = 'Sam'): Turn => ({ messageId: `h${++n}`, author: { id: 'u1', name, isBot: false }, text, at: n });
const bot = (pack: typeof support, personaId: string, strategy: string, text: string): Turn => {
  const p = persona(pack, personaId);
  return { messageId: `b${++n}`, author: { id: p.id, name: p.displayName, isBot: true, personaId: p.id }, text, at: n, strategy };
};

const opening = human('I failed my driving test for the third time today and I feel so stupid and embarrassed.');

describe('group reward', () => {
  it('penalises a turn that echoes an earlier companion turn', async () => {
    const first = bot(support, 'anchor', 'reflection', 'It sounds like failing the driving test again left you feeling embarrassed and stupid, which is a heavy thing to carry.');
    const echo = bot(support, 'catalyst', 'question', 'It sounds like failing the driving test again left you feeling embarrassed and stupid, which is a heavy thing to carry?');
    const fresh = bot(support, 'catalyst', 'question', 'What did the examiner say went wrong this time, compared with the first two attempts?');
    const echoed = await groupReward({ pack: support, context: [opening, first], turns: [echo], engagement: 0.6 });
    const original = await groupReward({ pack: support, context: [opening, first], turns: [fresh], engagement: 0.6 });
    expect(echoed.originality!).toBeLessThan(0.2);
    expect(original.originality!).toBeGreaterThan(0.8);
    expect(echoed.total).toBeLessThan(original.total);
  });

  it('penalises parroting the human but not paraphrasing them', async () => {
    const parrot = bot(support, 'anchor', 'restatement', opening.text);
    const paraphrase = bot(support, 'anchor', 'restatement', 'So this was your third attempt at the test, and not passing it has left you feeling foolish.');
    const a = await groupReward({ pack: support, context: [opening], turns: [parrot], engagement: 0.5 });
    const b = await groupReward({ pack: support, context: [opening], turns: [paraphrase], engagement: 0.5 });
    expect(a.originality!).toBeLessThan(0.1);
    expect(b.originality!).toBe(1);
  });

  it('penalises an over-talking round against one turn with the same content', async () => {
    const turns = [
      bot(support, 'anchor', 'reflection', 'It sounds like a really discouraging day, and embarrassment on top of the disappointment.'),
      bot(support, 'catalyst', 'question', 'What do you think made today different from how you drive when you practise?'),
      bot(support, 'beacon', 'affirmation', 'Going back for a third attempt shows real persistence; plenty of people would have given up.'),
      bot(support, 'guide', 'suggestion', 'You could ask the examiner for the written feedback and book a lesson aimed at exactly those points.'),
    ];
    const one = await groupReward({ pack: support, context: [opening], turns: turns.slice(0, 1), engagement: 0.6 });
    const wall = await groupReward({ pack: support, context: [opening], turns, engagement: 0.6 });
    expect(one.overTalk).toBe(0);
    expect(wall.overTalk).toBeGreaterThan(0.9);
    expect(wall.total).toBeLessThan(one.total);
    // The penalty is per stretch after one human message: the same four turns spread over four messages cost nothing.
    const spread = turns.flatMap((t, i) => [human(`reply number ${i} about the test`), t]);
    expect(overTalkPenalty(spread)).toBe(0);
  });

  it('counts the turns a round had already taken before the block', async () => {
    const before = bot(support, 'anchor', 'reflection', 'That sounds so discouraging.');
    const after = bot(support, 'catalyst', 'question', 'What felt hardest about it?');
    const alone = await groupReward({ pack: support, context: [opening], turns: [after], engagement: 0.5 });
    const second = await groupReward({ pack: support, context: [opening, before], turns: [after], engagement: 0.5 });
    expect(alone.overTalk).toBe(0);
    expect(second.overTalk).toBeCloseTo(0.35, 5);
  });

  it('rewards a turn that fits its persona over one that does not', async () => {
    const fits = bot(support, 'anchor', 'reflection', 'It sounds like you feel embarrassed and stupid after the test, and that is a heavy thing to sit with. Is that close?');
    // The validator giving advice: not its strategy, and in another companion's voice.
    const offRole = bot(support, 'anchor', 'suggestion', 'You could book two more lessons and try a different test centre next month.');
    // Out of character altogether.
    const generic = bot(support, 'anchor', 'reflection', 'As an AI language model, I understand that tests can be stressful.');
    const r1 = await groupReward({ pack: support, context: [opening], turns: [fits], engagement: 0.5 });
    const r2 = await groupReward({ pack: support, context: [opening], turns: [offRole], engagement: 0.5 });
    const r3 = await groupReward({ pack: support, context: [opening], turns: [generic], engagement: 0.5 });
    expect(r1.fidelity!).toBeGreaterThan(0.8);
    expect(r2.fidelity!).toBeLessThan(0.5);
    expect(r3.fidelity).toBe(0);
    expect(r1.total).toBeGreaterThan(r2.total);
    expect(r1.total).toBeGreaterThan(r3.total);
  });

  it('tells meeting personas apart by voice and strategy', () => {
    const score = roleStrategyFidelity(meeting);
    const skeptic = persona(meeting, 'skeptic');
    const risk = 'The risk is the migration: if the vendor API differs, the savings go on rework. Has anyone checked the switching cost?';
    expect(score(skeptic, [], risk, 'challenge') as number).toBeGreaterThan(score(skeptic, [], 'Great idea, everyone agrees, let us celebrate!', 'challenge') as number);
    expect(score(skeptic, [], risk, 'challenge') as number).toBeGreaterThan(score(skeptic, [], risk, 'action-item') as number);
  });

  it('scores relevance to what the human said', async () => {
    const onTopic = bot(support, 'catalyst', 'question', 'What part of the driving test felt most embarrassing to you?');
    const offTopic = bot(support, 'catalyst', 'question', 'Have you thought about what you want for dinner tonight?');
    const a = await groupReward({ pack: support, context: [opening], turns: [onTopic], engagement: 0.5 });
    const b = await groupReward({ pack: support, context: [opening], turns: [offTopic], engagement: 0.5 });
    expect(a.relevance!).toBeGreaterThan(0.7);
    expect(b.relevance!).toBe(0);
  });

  it('reports each component and a weighted total, and uses the fidelity hook', async () => {
    const t = bot(support, 'beacon', 'affirmation', 'Going back a third time shows persistence.');
    const seen: string[] = [];
    const r = await groupReward(
      { pack: support, context: [opening], turns: [t, human('thanks, that helps')], engagement: 0.8 },
      { fidelity: async (p, ctx, text) => (seen.push(`${p.id}:${ctx.length}:${text}`), 0.25), weights: { overTalk: 1 } },
    );
    expect(seen).toEqual([`beacon:1:${t.text}`]);
    expect(r.fidelity).toBe(0.25);
    const w = DEFAULT_REWARD_WEIGHTS;
    const expected = (w.fidelity * 0.25 + w.originality * r.originality! + w.relevance * r.relevance! + w.engagement * 0.8) / (w.fidelity + w.originality + w.relevance + w.engagement) - r.overTalk;
    expect(r.total).toBeCloseTo(expected, 12);
    expect(r.turns).toHaveLength(1);
  });

  it('scores a block where the companions only listened from engagement alone', async () => {
    const r = await groupReward({ pack: support, context: [opening], turns: [human('And the worst part is my dad was watching.')], engagement: 0.7 });
    expect(r.fidelity).toBeNull();
    expect(r.originality).toBeNull();
    expect(r.relevance).toBeNull();
    expect(r.total).toBeCloseTo(0.7, 12);
  });

  it('reads weights from configuration and names what is wrong', () => {
    expect(parseRewardWeights('engagement=1, overTalk=0').engagement).toBe(1);
    expect(rewardWeightsFromEnv({ MASCOT_REWARD_WEIGHTS: 'fidelity=0.5' }).fidelity).toBe(0.5);
    expect(rewardWeightsFromEnv({}).engagement).toBe(DEFAULT_REWARD_WEIGHTS.engagement);
    expect(() => rewardWeightsFromEnv({ MASCOT_REWARD_WEIGHTS: 'fun=1' })).toThrow(/MASCOT_REWARD_WEIGHTS: unknown component "fun"/);
    expect(() => parseRewardWeights('engagement=-1')).toThrow(/engagement: "-1" must be a number from 0 to 10/);
    expect(() => parseRewardWeights('engagement')).toThrow(/not name=number/);
    expect(() => parseRewardWeights('fidelity=0,originality=0,relevance=0,engagement=0')).toThrow(/at least one/);
  });
});
