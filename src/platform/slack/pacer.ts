// Pacing of posts: one queue per Slack channel (Slack allows about one message per second per
// channel), jobs in order, one at a time. A rate-limited call waits as long as Slack asks and is
// retried inside its own queue slot, so nothing behind it overtakes it and nothing is sent twice.
import Bottleneck from 'bottleneck';
import { webApi } from '@slack/bolt';
import type { Logger } from '../../log.ts';
import { sleep } from '../../util/sleep.ts';

export interface PacerOptions {
  /** Least time between the starts of two jobs in one channel. */
  minIntervalMs: number;
  /** Rate-limited retries of one job before it fails. */
  maxRetries?: number;
  log: Logger;
}

/** How long Slack asked us to wait, when `err` is a rate limit; undefined otherwise. */
export function rateLimitWaitMs(err: unknown): number | undefined {
  const e = err as { code?: string; retryAfter?: number; data?: { error?: string } };
  if (e?.code === webApi.ErrorCode.RateLimitedError) return Math.max(0, (e.retryAfter ?? 1) * 1000);
  // Some methods answer HTTP 200 with ok:false instead of a 429.
  if (e?.code === webApi.ErrorCode.PlatformError && (e.data?.error === 'ratelimited' || e.data?.error === 'rate_limited')) return 1000;
  return undefined;
}

export class ChannelPacer {
  private readonly group: Bottleneck.Group;
  private readonly maxRetries: number;

  constructor(private readonly options: PacerOptions) {
    this.group = new Bottleneck.Group({ maxConcurrent: 1, minTime: options.minIntervalMs });
    this.maxRetries = options.maxRetries ?? 5;
  }

  /** Run `job` in `channel`'s queue; a rate limit is waited out and the job run again. */
  schedule<T>(channel: string, job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.group.key(channel).schedule(async () => {
      for (let attempt = 0; ; attempt++) {
        signal?.throwIfAborted();
        try {
          return await job();
        } catch (err) {
          const wait = rateLimitWaitMs(err);
          if (wait === undefined || attempt >= this.maxRetries) throw err;
          this.options.log.warn({ channel, waitMs: wait, attempt: attempt + 1 }, 'slack rate limit; waiting before retrying');
          await sleep(wait, signal);
        }
      }
    });
  }

  /** Stop accepting jobs and drop queued ones (shutdown). */
  async stop(): Promise<void> {
    await Promise.all(this.group.limiters().map(({ limiter }) => limiter.stop({ dropWaitingJobs: true }).catch(() => {})));
  }
}
