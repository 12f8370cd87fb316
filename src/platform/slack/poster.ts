// Posting to Slack without losing or doubling a turn. Every post goes through its channel's pacing
// queue; rate limits are waited out there. A post whose answer never arrived (connection dropped,
// Slack answered 5xx) may or may not have landed: each post carries a turn id in its message
// metadata, so before trying again we look for it in the conversation and reuse it if it is there.
import { randomUUID } from 'node:crypto';
import { webApi } from '@slack/bolt';
import type { Logger } from '../../log.ts';
import type { SlackIdentity, WebClient } from './identities.ts';
import type { SlackMessage } from './message.ts';
import { rateLimitWaitMs, type ChannelPacer } from './pacer.ts';

export const TURN_EVENT_TYPE = 'mascot_turn';

export interface PostRequest {
  channel: string;
  /** Post in this thread; absent for a top-level message (a DM). */
  threadTs?: string;
  message: SlackMessage;
  identity: SlackIdentity;
  signal?: AbortSignal;
}

const AMBIGUOUS_RETRIES = 2;
/** Our clock and Slack's may differ; look this far back for a post we may have made. */
const CLOCK_SLACK_S = 120;

/** True when Slack may have acted on the request although we got no answer. */
function ambiguous(err: unknown): boolean {
  const e = err as { code?: string; statusCode?: number };
  return e?.code === webApi.ErrorCode.RequestError || (e?.code === webApi.ErrorCode.HTTPError && (e.statusCode ?? 0) >= 500);
}

export class SlackPoster {
  constructor(
    private readonly pacer: ChannelPacer,
    /** Reads conversations (the director app's client, which has the history scopes). */
    private readonly reader: WebClient,
    private readonly log: Logger,
  ) {}

  /** Post and return the message's ts. */
  post(req: PostRequest): Promise<string> {
    const turnId = randomUUID();
    return this.pacer.schedule(req.channel, () => this.send(req, turnId), req.signal);
  }

  private async send(req: PostRequest, turnId: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const startedAt = Date.now();
      try {
        const res = await req.identity.client.chat.postMessage({
          channel: req.channel,
          ...(req.threadTs ? { thread_ts: req.threadTs } : {}),
          text: req.message.text,
          blocks: req.message.blocks,
          unfurl_links: false,
          unfurl_media: false,
          ...req.identity.look,
          metadata: { event_type: TURN_EVENT_TYPE, event_payload: { turn: turnId } },
        });
        if (!res.ts) throw new Error('chat.postMessage answered without a message ts');
        return res.ts;
      } catch (err) {
        if (rateLimitWaitMs(err) !== undefined || !ambiguous(err) || attempt >= AMBIGUOUS_RETRIES) throw err;
        const landed = await this.find(req, turnId, startedAt).catch((lookupErr: unknown) => {
          // Without knowing, a second post could double the turn: give up on this one instead.
          this.log.error({ channel: req.channel, err: (lookupErr as Error).message }, 'could not check whether a failed post landed; not retrying');
          throw err;
        });
        if (landed) return landed;
        this.log.warn({ channel: req.channel, attempt: attempt + 1, err: (err as Error).message }, 'slack post failed before landing; retrying');
      }
    }
  }

  /** The ts of the message carrying `turnId`, if it reached the conversation. */
  private async find(req: PostRequest, turnId: string, startedAt: number): Promise<string | undefined> {
    const oldest = (startedAt / 1000 - CLOCK_SLACK_S).toFixed(6);
    const res = req.threadTs
      ? await this.reader.conversations.replies({ channel: req.channel, ts: req.threadTs, oldest, include_all_metadata: true, limit: 200 })
      : await this.reader.conversations.history({ channel: req.channel, oldest, include_all_metadata: true, limit: 200 });
    const match = (res.messages ?? []).find((m) => {
      const meta = (m as { metadata?: { event_type?: string; event_payload?: { turn?: unknown } } }).metadata;
      return meta?.event_type === TURN_EVENT_TYPE && meta.event_payload?.turn === turnId;
    });
    return match?.ts;
  }
}
