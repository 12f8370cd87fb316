import { describe, expect, it } from 'vitest';
import { loadPacks } from '../src/persona/loader.ts';
import { namedPersonas } from '../src/persona/names.ts';
import { humanEvent, makeEngine, RecordingOutlet, ScriptedGenerator } from './support/core.ts';

const support = loadPacks().get('support')!.personas;

describe('personas named in the text', () => {
  it('finds handles in any case and display names as written', () => {
    expect(namedPersonas('Catalyst, what do you think?', support)).toEqual(['catalyst']);
    expect(namedPersonas('thanks @guide and @Beacon', support)).toEqual(['beacon', 'guide']);
    expect(namedPersonas('I read a guide to moving and felt like an anchor was gone', support)).toEqual([]);
    expect(namedPersonas('me@anchor.example wrote', support)).toEqual([]);
  });

  it('a named persona opens the round even right after it spoke', async () => {
    const gen = new ScriptedGenerator();
    const { engine } = makeEngine(gen);
    const outlet = new RecordingOutlet();
    await engine.receive(humanEvent('My sister stopped talking to me and I feel awful.'), outlet);
    const last = outlet.posts.at(-1)!.persona;
    const before = outlet.posts.length;
    await engine.receive(humanEvent(`${last.displayName}, what do you mean exactly?`), outlet);
    expect(outlet.posts[before]!.persona.id).toBe(last.id);
  });
});
