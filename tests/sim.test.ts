import { describe, expect, it } from 'vitest';
import type { Turn } from '../src/core/types.ts';
import { builtinPolicies } from '../src/director/registry.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { OfflineUser, USER_DYNAMICS as D } from '../src/sim/offline-user.ts';
import { runConversation } from '../src/sim/run.ts';
import { loadProfiles, loadSuite, scriptOf, type UserProfile } from '../src/sim/scenario.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const suite = loadSuite('support');
const profiles = loadProfiles();
const found = suite.scenarios.find((s) => s.id === 'neg-lonely-abroad');
if (found?.kind !== 'support') throw new Error('scenario neg-lonely-abroad missing from the support suite');
const scenario = found;
/** A plain profile so the arithmetic below is easy to follow. */
const plain: UserProfile = {
  ...profiles[0]!,
  patience: 0.8,
  rushSensitivity: 1,
  turnTolerance: 2,
  wordBudget: 400,
  verbosity: 2,
  needs: { explore: 1, insight: 1, action: 1 },
  gains: { explore: 1, insight: 1, action: 1 },
};

let n = 0;
const human = (text: string): Turn => ({ messageId: `h${++n}`, author: { id: 'sim-sam', name: 'Sam', isBot: false }, text, at: n });
const bot = (personaId: string, strategy: string, text: string): Turn => ({ messageId: `b${++n}`, author: { id: personaId, name: personaId, isBot: true, personaId }, text, at: n, strategy });

function user(profile = plain) {
  return new OfflineUser(scriptOf(scenario), profile, 1);
}

describe('offline simulated user', () => {
  const opening = human(scenario.opening);

  it('starts from the scenario needs scaled by the profile', () => {
    const u = new OfflineUser(scriptOf(scenario), { ...plain, needs: { explore: 1, insight: 0.5, action: 2 } }, 1);
    expect(u.needs()).toEqual({ explore: 1, insight: scenario.needs.insight * 0.5, action: Math.min(1, scenario.needs.action * 2) });
    expect(u.focus()).toBe('explore');
  });

  it('meets the need to be heard when heard, and opens up', () => {
    const u = user();
    const turn = bot('anchor', 'reflection', 'It sounds like you feel so alone since you moved abroad, with your husband away most weeks.');
    const reply = u.react({ pack: support, history: [opening, turn], human: opening, botTurns: [turn] });
    const effect = u.lastEffect!;
    expect(effect.rushed || effect.repeated || effect.lectured).toBe(false);
    // n_explore -= GAIN * gain * (0.5 + 0.5 rel) * (0.6 + 0.4 openness), openness 0.5 at the start.
    expect(1 - u.needs().explore).toBeGreaterThan(D.GAIN * 0.5 * 0.8);
    expect(1 - u.needs().explore).toBeLessThanOrEqual(D.GAIN * 0.8);
    expect(u.needs().insight).toBe(scenario.needs.insight);
    expect(u.state.patience).toBeCloseTo(0.8 + (effect.progress > 0.2 ? 0.03 : 0), 12);
    // The person says more of what happened (the scenario's shares).
    expect(reply.lines.map((l) => l.text).join(' ')).toContain(scenario.shares[0]);
    expect(reply.end).toBeUndefined();
    expect(reply.engagement).toBeGreaterThan(0.5);
  });

  it('pushes back when rushed toward solutions before feeling heard', () => {
    const u = user();
    const turn = bot('guide', 'suggestion', 'You could join a language class at the community centre to meet people.');
    const reply = u.react({ pack: support, history: [opening, turn], human: opening, botTurns: [turn] });
    expect(u.lastEffect!.rushed).toBe(true);
    expect(u.state.patience).toBeCloseTo(0.8 - D.RUSH_COST, 12);
    expect(u.needs().action).toBeCloseTo(scenario.needs.action * (1 - D.RUSHED_GAIN), 12);
    expect(u.needs().explore).toBe(1);
    expect(reply.lines).toHaveLength(1);
    expect(reply.lines[0]!.text).toBe(scenario.whenRushed);
    expect(reply.engagement).toBeLessThan(0.4);
    // Rushed again: shorter push-back in other words, never the same line twice in a row.
    const again = u.react({ pack: support, history: [opening, turn, human(reply.lines[0]!.text), turn], human: human(reply.lines[0]!.text), botTurns: [bot('guide', 'information', 'Many cities have expat groups that meet weekly.')] });
    expect(u.lastEffect!.rushed).toBe(true);
    expect(again.lines[0]!.text).not.toBe(scenario.whenRushed);
  });

  it('takes nothing from a repeated turn and says so', () => {
    const u = user();
    const first = bot('anchor', 'reflection', 'It sounds like you feel so alone since you moved abroad.');
    u.react({ pack: support, history: [opening, first], human: opening, botTurns: [first] });
    const before = u.needs();
    const next = human(scenario.shares[0]!);
    const echo = bot('beacon', 'reassurance', 'It sounds like you feel so alone since you moved abroad.');
    const reply = u.react({ pack: support, history: [opening, first, next, echo], human: next, botTurns: [echo] });
    expect(u.lastEffect!.repeated).toBe(true);
    expect(u.needs()).toEqual(before);
    expect(reply.lines[0]!.text.startsWith(plain.voice.repeated)).toBe(true);
  });

  it('feels lectured by more turns than it welcomes', () => {
    const u = user({ ...plain, turnTolerance: 1 });
    const turns = [
      bot('anchor', 'reflection', 'That sounds lonely.'),
      bot('beacon', 'reassurance', 'Anyone would struggle with that much quiet.'),
      bot('catalyst', 'restatement', 'So your husband is away and the days are long.'),
    ];
    const reply = u.react({ pack: support, history: [opening, ...turns], human: opening, botTurns: turns });
    expect(u.lastEffect!.lectured).toBe(true);
    expect(u.lastEffect!.cost).toBeCloseTo(2 * D.LECTURE_COST, 12);
    expect(reply.lines[0]!.text.startsWith(plain.voice.overwhelmed)).toBe(true);

    // One long turn past the word budget: min(0.2, 0.05 * (words / budget - 1)).
    const wordy = user({ ...plain, wordBudget: 20 });
    const long = bot('anchor', 'reflection', 'It sounds like the loneliness has been building for months, with your husband away, the language still hard, and friends at home drifting, so even small errands feel heavy.');
    wordy.react({ pack: support, history: [opening, long], human: opening, botTurns: [long] });
    expect(wordy.lastEffect!.lectured).toBe(true);
    expect(wordy.lastEffect!.cost).toBeCloseTo(Math.min(0.2, 0.05 * (long.text.split(/\s+/).length / 20 - 1)), 12);
  });

  it('minds silence after a question, and uses silence after a statement to be heard a little', () => {
    const asked = user();
    const q = human('Is it normal to feel this lonely?');
    asked.react({ pack: support, history: [q], human: q, botTurns: [] });
    expect(asked.lastEffect!.ignored).toBe(true);
    expect(asked.state.patience).toBeCloseTo(0.8 - D.IGNORED_COST, 12);

    const told = user();
    told.react({ pack: support, history: [opening], human: opening, botTurns: [] });
    expect(told.lastEffect!.ignored).toBe(false);
    expect(told.needs().explore).toBeCloseTo(1 - D.YIELD_GAIN, 12);
  });

  it('asks for help acting once heard and helped to think, and ends resolved when every need is met', () => {
    const u = user();
    u.state.needs = { explore: 0.1, insight: 0.1, action: 0.5 };
    const h = human('I think I gave up my whole life here and never said how hard it is.');
    const t = bot('catalyst', 'question', 'What would make the weeks feel less empty?');
    const reply = u.react({ pack: support, history: [h, t], human: h, botTurns: [t] });
    expect(reply.lines.at(-1)!.text).toBe('What do you think I should do?');
    u.state.needs.action = D.MET + 0.01;
    const s = bot('guide', 'suggestion', 'You could tell your husband honestly how lonely the weeks are, tonight.');
    const done = u.react({ pack: support, history: [h, t, human('What do you think I should do?'), s], human: human('What do you think I should do?'), botTurns: [s] });
    expect(done.end).toBe('resolved');
    expect(done.lines[0]!.text).toContain('tell my husband honestly how lonely the weeks are');
  });

  it('leaves when patience runs out', () => {
    const u = user({ ...plain, patience: 0.2, rushSensitivity: 2 });
    const t = bot('guide', 'suggestion', 'Join a club.');
    const reply = u.react({ pack: support, history: [opening, t], human: opening, botTurns: [t] });
    expect(reply.end).toBe('left');
    expect(reply.engagement).toBe(0);
    expect(reply.lines[0]!.text).toBe(plain.voice.leave);
  });

  it('forks into an independent copy', () => {
    const u = user();
    const f = u.fork(5);
    const t = bot('anchor', 'reflection', 'That sounds so lonely.');
    f.react({ pack: support, history: [opening, t], human: opening, botTurns: [t] });
    expect(u.needs().explore).toBe(1);
    expect(f.needs().explore).toBeLessThan(1);
  });
});

describe('simulated conversations', () => {
  const policies = builtinPolicies();
  const text = (turns: Turn[]) => turns.map((t) => `${t.author.name}|${t.strategy ?? ''}|${t.text}|${t.at}`).join('\n');

  it('replay bit for bit from the same seed and differ under another', async () => {
    const a = await runConversation({ pack: support, scenario, seed: 3, policy: policies.get('random')!, profiles });
    const b = await runConversation({ pack: support, scenario, seed: 3, policy: policies.get('random')!, profiles });
    const c = await runConversation({ pack: support, scenario, seed: 4, policy: policies.get('random')!, profiles });
    expect(text(a.history)).toBe(text(b.history));
    expect(a.engagements).toEqual(b.engagements);
    expect(text(a.history)).not.toBe(text(c.history));
  });

  it('drive the real director: every decision sees the state the engine would build', async () => {
    const c = await runConversation({ pack: support, scenario, seed: 1, policy: policies.get('heuristic')!, profiles, maxRounds: 4 });
    expect(c.decisions.length).toBeGreaterThan(3);
    for (const d of c.decisions) {
      expect(d.state.transcript.length).toBeLessThanOrEqual(12);
      expect(d.state.transcript.at(-1)!.messageId).toBe(d.state.roundTurns.length === 0 ? d.state.human.messageId : d.state.transcript.at(-1)!.messageId);
      expect(d.state.roundTurns.length).toBeLessThan(support.director.maxBotTurns);
      expect(d.decision.policyId).toBe('heuristic');
    }
    // Companion turns carry persona and strategy; the person's turns do not.
    for (const t of c.history) expect(t.author.isBot ? t.strategy !== undefined && t.author.personaId !== undefined : t.strategy === undefined).toBe(true);
    expect(c.history[0]!.text).toBe(scenario.opening);
  });
});
