import { describe, expect, it } from 'vitest';
import { humanEvent, makeEngine, RecordingOutlet, ScriptedGenerator } from './support/core.ts';

describe('turn scheduler', () => {
  it('stops at the per-message cap of bot turns', async () => {
    const gen = new ScriptedGenerator();
    const { engine, store } = makeEngine(gen);
    store.setChannelSetting('console:test', 'policy', 'round-robin', 'test');
    store.setChannelSetting('console:test', 'maxBotTurns', 3, 'test');
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('I had a long week and I feel drained by work and everything.'), outlet);
    expect(outlet.posts).toHaveLength(3);

    store.setChannelSetting('console:test', 'maxBotTurns', 1, 'test');
    await engine.receive(humanEvent('Still thinking about it all.'), outlet);
    expect(outlet.posts).toHaveLength(4);
  });

  it('a new human message aborts the in-flight generation and the round restarts from the new state', async () => {
    const gen = new ScriptedGenerator();
    gen.hold = (req) => req.context.lastHumanText.startsWith('first');
    gen.reply = (req) => `${req.personaId} answers ${req.context.lastHumanText.split(':')[0]}.`;
    const { engine } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    const first = engine.receive(humanEvent('first: I feel so lost since the move'), outlet);
    while (gen.requests.length === 0) await new Promise((r) => setTimeout(r, 2));
    const second = engine.receive(humanEvent('second: actually, what should I do about it?'), outlet);
    await Promise.all([first, second]);

    expect(gen.aborted).toHaveLength(1);
    expect(gen.aborted[0]!.signal?.aborted).toBe(true);
    // Nothing from the cancelled round was posted; the new round answered the new message.
    expect(outlet.posts.length).toBeGreaterThan(0);
    for (const p of outlet.posts) expect(p.text).toMatch(/answers second/);
  });

  it('routes a named persona first and never lets a persona speak twice in a row', async () => {
    const gen = new ScriptedGenerator();
    const { engine } = makeEngine(gen, { seed: 7 });
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('Guide, what should I do about my landlord ignoring me?', { mentions: ['guide'] }), outlet);
    expect(outlet.posts[0]!.persona.id).toBe('guide');

    for (const text of ['I keep replaying the argument.', 'It makes me angry and sad.', 'Maybe I should write to him.', 'I am worried he will not answer.']) {
      await engine.receive(humanEvent(text), outlet);
    }
    for (let i = 1; i < outlet.posts.length; i++) expect(outlet.posts[i]!.persona.id).not.toBe(outlet.posts[i - 1]!.persona.id);
  });

  it('replies to the human message on the first turn only', async () => {
    const gen = new ScriptedGenerator();
    const { engine } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    const event = humanEvent('I moved abroad and feel so alone since my husband travels for work');
    await engine.receive(event, outlet);
    expect(outlet.posts.length).toBe(2);
    expect(outlet.posts[0]!.options.replyTo).toBe(event.messageId);
    expect(outlet.posts[1]!.options.replyTo).toBeUndefined();
  });

  it('ignores empty messages and duplicate deliveries; truncates oversized ones with a note', async () => {
    const gen = new ScriptedGenerator();
    const { engine, db } = makeEngine(gen, { maxInputChars: 200 });
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('   \n\t '), outlet);
    expect(gen.requests).toHaveLength(0);

    const long = humanEvent(`I need to tell you everything. ${'It has been a lot. '.repeat(40)}`);
    await engine.receive(long, outlet);
    await engine.receive({ ...long }, outlet);
    expect(outlet.notices.some((n) => n.includes('200'))).toBe(true);
    const stored = db.prepare('SELECT text FROM messages WHERE is_bot = 0').pluck().all() as string[];
    expect(stored).toHaveLength(1);
    expect(stored[0]!.length).toBe(200);
  });

  it('logs the human message and skips the round when the model endpoint fails, or posts a fallback', async () => {
    const gen = new ScriptedGenerator();
    gen.fail = () => new Error('connect ECONNREFUSED 127.0.0.1:9');
    const { engine, db } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('Is anyone there?'), outlet);
    expect(outlet.posts).toHaveLength(0);
    expect(db.prepare('SELECT COUNT(*) FROM messages WHERE is_bot = 0').pluck().get()).toBe(1);

    const fallback = makeEngine(gen, { onGenerationFailure: 'fallback' });
    await fallback.engine.receive(humanEvent('Is anyone there?'), outlet);
    expect(outlet.posts).toHaveLength(1);
    expect(outlet.posts[0]!.options.offline).toBe(true);
  });

  it('logs every turn and every decision with its full distribution', async () => {
    const gen = new ScriptedGenerator();
    const { engine, db } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('My exam went badly and I feel like a failure.'), outlet);
    const decisions = db.prepare('SELECT actions_json, probs_json, chosen, propensity, policy_id FROM decisions ORDER BY id').all() as {
      actions_json: string;
      probs_json: string;
      chosen: string;
      propensity: number;
      policy_id: string;
    }[];
    expect(decisions.length).toBeGreaterThanOrEqual(2);
    for (const d of decisions) {
      const actions = JSON.parse(d.actions_json) as string[];
      const probs = JSON.parse(d.probs_json) as number[];
      expect(probs).toHaveLength(actions.length);
      expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      expect(d.propensity).toBeCloseTo(probs[actions.indexOf(d.chosen)]!, 12);
      expect(d.policy_id).toBe('heuristic');
    }
    const bots = db.prepare('SELECT persona_id, strategy, decision_id FROM messages WHERE is_bot = 1').all() as { decision_id: number | null }[];
    expect(bots).toHaveLength(outlet.posts.length);
    for (const b of bots) expect(b.decision_id).not.toBeNull();
  });

  it('does not log people who opted out, but still answers them', async () => {
    const gen = new ScriptedGenerator();
    const { engine, store, db } = makeEngine(gen);
    store.setOptOut('console', 'u1', true);
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('Please do not keep this.'), outlet);
    expect(outlet.posts.length).toBeGreaterThan(0);
    expect(db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM decisions').pluck().get()).toBe(0);
  });

  it('takes part in non-console channels only when enabled, or with only the named persona', async () => {
    const gen = new ScriptedGenerator();
    const { engine, store } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    const discord = (text: string, mentions: string[] = []) => humanEvent(text, { platform: 'discord', channelId: 'c1', mentions });
    await engine.receive(discord('hello everyone, rough day'), outlet);
    expect(outlet.posts).toHaveLength(0);

    await engine.receive(discord('Beacon, can you cheer me up?', ['beacon']), outlet);
    expect(outlet.posts.map((p) => p.persona.id)).toEqual(['beacon']);

    store.setChannelSetting('discord:c1', 'enabled', true, 'mod');
    await engine.receive(discord('I failed my driving test again and feel stupid.'), outlet);
    expect(outlet.posts.length).toBeGreaterThan(1);

    store.setChannelSetting('discord:c1', 'paused', true, 'mod');
    const before = outlet.posts.length;
    await engine.receive(discord('anyone?'), outlet);
    expect(outlet.posts).toHaveLength(before);
  });

  it('bot messages never start a round but join the transcript', async () => {
    const gen = new ScriptedGenerator();
    const { engine } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('I am a weather bot: rain today.', { author: { id: 'b9', name: 'WeatherBot', isBot: true } }), outlet);
    expect(outlet.posts).toHaveLength(0);
    await engine.receive(humanEvent('Rain again, and I feel low.'), outlet);
    expect(gen.requests[0]!.messages[1]!.content).toContain('WeatherBot: I am a weather bot');
  });

  it('applies moderator overrides from the next turn without restart', async () => {
    const gen = new ScriptedGenerator();
    const { engine, store } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    for (const id of ['anchor', 'catalyst', 'beacon']) store.setPersonaOverride('support', id, '*', 'enabled', false, 'mod');
    await engine.receive(humanEvent('I lost my job today.'), outlet);
    expect(new Set(outlet.posts.map((p) => p.persona.id))).toEqual(new Set(['guide']));
    store.rollbackPersona('support', 'anchor', '*', 0, 'mod');
    await engine.receive(humanEvent('I am scared about rent.'), outlet);
    expect(outlet.posts.slice(1).some((p) => p.persona.id === 'anchor')).toBe(true);
  });

  it('paces bot turns and a human message during the pause cancels the pending turn', async () => {
    const gen = new ScriptedGenerator();
    gen.reply = (req) => `${req.personaId} answers ${req.context.lastHumanText.split(':')[0]}.`;
    const { engine } = makeEngine(gen, { pacingMs: 400 });
    const outlet = new RecordingOutlet();
    const first = engine.receive(humanEvent('first: I moved and I feel so lonely here'), outlet);
    while (outlet.posts.length === 0) await new Promise((r) => setTimeout(r, 2));
    // The second turn of the first round is now generated and waiting out its pause.
    while (gen.requests.length < 2) await new Promise((r) => setTimeout(r, 2));
    const second = engine.receive(humanEvent('second: sorry, one more thing'), outlet);
    await Promise.all([first, second]);
    expect(outlet.posts.filter((p) => p.text.includes('answers first'))).toHaveLength(1);
    expect(outlet.posts.filter((p) => p.text.includes('answers second')).length).toBeGreaterThan(0);
  });
});
