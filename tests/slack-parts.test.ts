// The Slack adapter's parts on their own: settings, conversations and text, mentions, the offline
// label, event receipts across a restart, and the pacing queue with rate limits.
import path from 'node:path';
import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.ts';
import { loadPacks } from '../src/persona/loader.ts';
import type { SlackIdentities } from '../src/platform/slack/identities.ts';
import { conversationOf, personaMentions, readableText } from '../src/platform/slack/inbound.ts';
import { escapeText, splitText, turnMessage } from '../src/platform/slack/message.ts';
import { ChannelPacer, rateLimitWaitMs } from '../src/platform/slack/pacer.ts';
import { EventReceipts } from '../src/platform/slack/receipts.ts';
import { loadSlackSettings, SlackSettingsError } from '../src/platform/slack/settings.ts';
import { openDatabase } from '../src/store/db.ts';
import { tempDir } from './support/core.ts';

const meeting = loadPacks().get('meeting')!;
const personas = meeting.personas;

describe('Slack settings', () => {
  const base = { SLACK_BOT_TOKEN: 'xoxb-fake-director', SLACK_SIGNING_SECRET: 'fake-signing-secret' };

  it('chooses the receiver from the tokens given and reads persona tokens from the persona files', () => {
    const http = loadSlackSettings({ ...base, SLACK_BOT_TOKEN_SCRIBE: 'xoxb-fake-scribe' }, personas);
    expect(http).toMatchObject({ receiver: 'http', port: 3000, eventsPath: '/slack/events', command: '/mascot', pacingMs: 1000, identity: 'auto' });
    expect([...http.personaTokens]).toEqual([['scribe', 'xoxb-fake-scribe']]);
    const socket = loadSlackSettings({ SLACK_BOT_TOKEN: 'xoxb-fake-director', SLACK_APP_TOKEN: 'xapp-1-fake' }, personas);
    expect(socket.receiver).toBe('socket');
  });

  it('names every wrong variable, without echoing secrets', () => {
    let error: unknown;
    try {
      loadSlackSettings({ SLACK_BOT_TOKEN: 'oops-secret-value', SLACK_SIGNING_SECRET: 'fake-signing-secret', SLACK_MODERATOR_IDS: 'U012ABCDEF, alice', SLACK_PORT: 'eighty', SLACK_BOT_TOKEN_SKEPTIC: 'xapp-wrong' }, personas);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SlackSettingsError);
    const message = (error as Error).message;
    expect(message).toContain('SLACK_BOT_TOKEN: must be a bot token starting with xoxb-');
    expect(message).toContain('SLACK_MODERATOR_IDS');
    expect(message).toContain('got "U012ABCDEF, alice"');
    expect(message).toContain('SLACK_PORT');
    expect(message).toContain('SLACK_BOT_TOKEN_SKEPTIC (persona skeptic)');
    expect(message).not.toContain('oops-secret-value');
    expect(message).not.toContain('xapp-wrong');
  });

  it('asks for a way to receive events, and for persona tokens in apps mode', () => {
    expect(() => loadSlackSettings({ SLACK_BOT_TOKEN: 'xoxb-fake' }, personas)).toThrow(/SLACK_APP_TOKEN .* or SLACK_SIGNING_SECRET/);
    expect(() => loadSlackSettings({ ...base, SLACK_IDENTITY_MODE: 'apps' }, personas)).toThrow(/SLACK_BOT_TOKEN_FACILITATOR/);
  });
});

describe('Slack conversations and text', () => {
  it('puts a channel message and its replies in one thread conversation that follows the channel', () => {
    expect(conversationOf({ channel: 'C1', channel_type: 'channel', ts: '100.000001' })).toEqual({ channel: 'C1', threadTs: '100.000001', id: 'C1:100.000001', parentId: 'C1' });
    expect(conversationOf({ channel: 'C1', channel_type: 'channel', ts: '101.000001', thread_ts: '100.000001' })).toEqual(conversationOf({ channel: 'C1', ts: '100.000001' }));
    // A DM is one conversation, answered in place; app_mention events carry no channel_type.
    expect(conversationOf({ channel: 'D1', channel_type: 'im', ts: '5.1' })).toEqual({ channel: 'D1', id: 'D1' });
    expect(conversationOf({ channel: 'D1', ts: '5.1' })).toEqual({ channel: 'D1', id: 'D1' });
  });

  it('turns Slack markup into readable text', async () => {
    const names: Record<string, string> = { U1: 'Dana', U2: 'Lee' };
    const text = await readableText('<@U1> and <@U2|lee> see <#C9|launch> and <https://x.test/doc|the doc> &amp; <!here> &lt;3', async (id) => names[id] ?? id);
    expect(text).toBe('@Dana and @Lee see #launch and the doc (https://x.test/doc) & @here <3');
  });

  it('finds personas addressed by app mention, @name or a leading name', () => {
    const identities = { personaOfUser: (id: string) => (id === 'UPLAN' ? 'planner' : undefined) } as unknown as SlackIdentities;
    expect(personaMentions('<@UPLAN> when is it due?', personas, identities)).toEqual(['planner']);
    expect(personaMentions('what does @skeptic think?', personas, identities)).toEqual(['skeptic']);
    expect(personaMentions('Scribe, note that down', personas, identities)).toEqual(['scribe']);
    expect(personaMentions('the scribe of the old team said so', personas, identities)).toEqual([]);
  });

  it('labels the offline voice in blocks and notification text, escapes markup, and splits long text', () => {
    const offline = turnMessage('Hi <!channel> & all', true);
    expect(offline.text).toBe('Hi &lt;!channel&gt; &amp; all (offline voice)');
    expect(JSON.stringify(offline.blocks)).toContain('offline voice: written by the built-in offline voice');
    const online = turnMessage('Plain.', false);
    expect(online.text).toBe('Plain.');
    expect(online.blocks).toHaveLength(1);
    expect(escapeText('<@U1>')).toBe('&lt;@U1&gt;');
    const pieces = splitText(`${'word '.repeat(700)}end.`, 3000);
    expect(pieces.length).toBe(2);
    expect(pieces.every((p) => p.length <= 3000)).toBe(true);
    expect(pieces.join(' ')).toBe(`${'word '.repeat(700)}end.`.replace(/\s+/g, ' ').trim());
  });
});

describe('Slack event receipts', () => {
  it('remember event ids across a restart', () => {
    const file = path.join(tempDir('mascot-receipts-'), 'mascot.db');
    const first = openDatabase(file);
    expect(new EventReceipts(first).firstDelivery('Ev1', 'T1')).toBe(true);
    expect(new EventReceipts(first).firstDelivery('Ev1', 'T1')).toBe(false);
    first.close();
    const again = openDatabase(file);
    const receipts = new EventReceipts(again);
    expect(receipts.firstDelivery('Ev1', 'T1')).toBe(false);
    expect(receipts.firstDelivery('Ev2', 'T1')).toBe(true);
    again.close();
  });
});

describe('Slack pacing', () => {
  const rateLimited = (seconds: number) => Object.assign(new Error('rate limited'), { code: webApi.ErrorCode.RateLimitedError, retryAfter: seconds });

  it('recognises rate limits, as 429s and as ok:false answers', () => {
    expect(rateLimitWaitMs(rateLimited(2))).toBe(2000);
    expect(rateLimitWaitMs({ code: webApi.ErrorCode.PlatformError, data: { error: 'ratelimited' } })).toBe(1000);
    expect(rateLimitWaitMs({ code: webApi.ErrorCode.PlatformError, data: { error: 'channel_not_found' } })).toBeUndefined();
    expect(rateLimitWaitMs(new Error('boom'))).toBeUndefined();
  });

  it('runs a channel in order, one job at a time, retrying a rate-limited job in its own slot', async () => {
    const pacer = new ChannelPacer({ minIntervalMs: 0, log: silentLogger() });
    const events: string[] = [];
    let running = 0;
    let limitedOnce = false;
    const job = (name: string) => async () => {
      running++;
      expect(running).toBe(1);
      events.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (name === 'b' && !limitedOnce) {
        limitedOnce = true;
        throw rateLimited(0);
      }
      events.push(`done ${name}`);
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((n) => pacer.schedule('C1', job(n))));
    expect(results).toEqual(['a', 'b', 'c']);
    expect(events).toEqual(['start a', 'done a', 'start b', 'start b', 'done b', 'start c', 'done c']);
    await pacer.stop();
  });

  it('passes other errors on, and does not run a job whose round was cancelled', async () => {
    const pacer = new ChannelPacer({ minIntervalMs: 0, log: silentLogger() });
    await expect(pacer.schedule('C1', async () => Promise.reject(new Error('channel_not_found')))).rejects.toThrow('channel_not_found');
    const cancelled = new AbortController();
    cancelled.abort(new Error('barge-in'));
    let ran = false;
    await expect(pacer.schedule('C1', async () => (ran = true), cancelled.signal)).rejects.toThrow('barge-in');
    expect(ran).toBe(false);
    await pacer.stop();
  });
});
