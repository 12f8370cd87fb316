// Per-channel conversation state: the transcript, what has been said, and the serialized
// chain of rounds. A new human message aborts the running round (barge-in) before its own starts.
import type { Turn } from '../core/types.ts';
import { createRng, type Rng } from '../util/rng.ts';

const TRANSCRIPT_LIMIT = 40;
const STRATEGY_MEMORY = 24;
const SEEN_IDS = 200;

export class ChannelSession {
  readonly transcript: Turn[] = [];
  readonly sessionStrategies: string[] = [];
  humanTurnCount = 0;
  readonly rng: Rng;
  /** Quiet until this time (ms since epoch), e.g. after a crisis message. */
  quietUntil = 0;
  private readonly seen: string[] = [];
  private current: AbortController | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly key: string,
    seed: number,
  ) {
    this.rng = createRng(seed);
  }

  /** True the first time a platform message id is seen (adapters may deliver twice). */
  markSeen(messageId: string): boolean {
    if (this.seen.includes(messageId)) return false;
    this.seen.push(messageId);
    if (this.seen.length > SEEN_IDS) this.seen.shift();
    return true;
  }

  append(turn: Turn): void {
    this.transcript.push(turn);
    if (this.transcript.length > TRANSCRIPT_LIMIT) this.transcript.splice(0, this.transcript.length - TRANSCRIPT_LIMIT);
    if (turn.strategy) {
      this.sessionStrategies.push(turn.strategy);
      if (this.sessionStrategies.length > STRATEGY_MEMORY) this.sessionStrategies.shift();
    }
  }

  /**
   * Cancel whatever round is running and queue `round` after it. The returned promise settles
   * when `round` has finished or was itself cancelled.
   */
  startRound(round: (signal: AbortSignal) => Promise<void>): Promise<void> {
    this.current?.abort(new Error('barge-in: a new human message arrived'));
    const controller = new AbortController();
    this.current = controller;
    const run = this.tail.then(async () => {
      if (controller.signal.aborted) return;
      await round(controller.signal);
    });
    this.tail = run.catch(() => {});
    return run.finally(() => {
      if (this.current === controller) this.current = undefined;
    });
  }

  /** Abort the running round, if any (shutdown, pause). */
  cancel(reason: string): void {
    this.current?.abort(new Error(reason));
  }

  /** Settles when every queued round has finished. */
  idle(): Promise<void> {
    return this.tail;
  }
}
