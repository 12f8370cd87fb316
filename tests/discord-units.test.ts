import { describe, expect, it } from 'vitest';
import { loadPacks } from '../src/persona/loader.ts';
import { DiscordSetupError, readDiscordSettings, resolveIdentities } from '../src/platform/discord/settings.ts';
import { splitMessage } from '../src/platform/discord/split.ts';

describe('splitting long turns for Discord', () => {
  it('keeps short text whole and cuts long text at sentence ends within the limit', () => {
    expect(splitMessage('  Short and sweet.  ')).toEqual(['Short and sweet.']);
    const text = 'One sentence here. Another one follows! Does a third fit? Maybe not.';
    const chunks = splitMessage(text, 40);
    expect(chunks).toEqual(['One sentence here. Another one follows!', 'Does a third fit? Maybe not.']);
  });

  it('prefers a paragraph break, falls back to a space, and hard-cuts only an endless word', () => {
    const para = `${'a'.repeat(30)}.\n\n${'b '.repeat(10)}end`;
    expect(splitMessage(para, 45)[0]).toBe(`${'a'.repeat(30)}.`);
    expect(splitMessage('word '.repeat(20).trim(), 22)).toEqual(['word word word word', 'word word word word', 'word word word word', 'word word word word', 'word word word word']);
    expect(splitMessage('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('never exceeds the limit and loses no words', () => {
    const words = Array.from({ length: 900 }, (_, i) => (i % 13 === 12 ? `w${i}.` : `w${i}`));
    const text = words.join(' ');
    for (const max of [50, 333, 2000]) {
      const chunks = splitMessage(text, max);
      for (const c of chunks) expect(c.length).toBeLessThanOrEqual(max);
      expect(chunks.join(' ')).toBe(text);
    }
  });
});

describe('Discord settings', () => {
  const packs = loadPacks();

  it('reports every wrong variable at once, naming it and what is accepted', () => {
    const env = { DISCORD_API_BASE_URL: 'localhost:9', DISCORD_WEBHOOKS: 'sometimes', DISCORD_PACKS: 'support,karaoke', DISCORD_COMMAND_GUILD_ID: 'my-server' };
    let error: DiscordSetupError | undefined;
    try {
      readDiscordSettings(env, packs, 'support');
    } catch (err) {
      error = err as DiscordSetupError;
    }
    expect(error).toBeInstanceOf(DiscordSetupError);
    expect(error!.problems).toEqual([
      'DISCORD_DIRECTOR_TOKEN is not set (the token of the director application)',
      'DISCORD_API_BASE_URL: "localhost:9" is not an http(s) URL (e.g. http://127.0.0.1:8080/api)',
      'DISCORD_WEBHOOKS: "sometimes" is not accepted (on or off)',
      'DISCORD_PACKS: "karaoke" not loaded (available: meeting, support)',
      'DISCORD_COMMAND_GUILD_ID: "my-server" is not a server id (digits)',
    ]);
  });

  it('gives each persona its bot token, or a webhook in webhook mode, and names the ones without', () => {
    const base = { DISCORD_DIRECTOR_TOKEN: 'fake-director', DISCORD_TOKEN_ANCHOR: 'fake-anchor', DISCORD_TOKEN_GUIDE: 'fake-guide' };
    const settings = readDiscordSettings(base, packs, 'support');
    expect(settings.packs.map((p) => p.id)).toEqual(['support']);
    expect(() => resolveIdentities(settings, base)).toThrow(/persona "beacon" \(support pack\) has no token: set DISCORD_TOKEN_BEACON[\s\S]*persona "catalyst"/);

    const hooks = readDiscordSettings({ ...base, DISCORD_WEBHOOKS: 'on', DISCORD_API_BASE_URL: 'http://127.0.0.1:9/api/' }, packs, 'support');
    expect(hooks.apiBaseUrl).toBe('http://127.0.0.1:9/api');
    expect(() => readDiscordSettings({ ...base, DISCORD_PACKS: 'meeting' }, packs, 'support')).toThrow(/DISCORD_PACKS: must include "support" \(MASCOT_PACK\)/);
    const identities = new Map([...resolveIdentities(hooks, base)].map(([p, i]) => [p.id, i.kind]));
    expect(Object.fromEntries(identities)).toEqual({ anchor: 'bot', beacon: 'webhook', catalyst: 'webhook', guide: 'bot' });
  });
});
