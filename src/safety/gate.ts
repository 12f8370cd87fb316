// The safety gate: every human message passes it before the director (the engine's `gate` hook).
// On a crisis verdict the director is bypassed and, in this order:
//   1. any round running in the channel is cancelled and the personas go quiet there for the
//      configured time (server setting, else MASCOT_SAFETY_QUIET_MINUTES);
//   2. one calm message with the server's (else the pack's) resources is posted as a notice, the
//      system's own voice rather than a cheerful persona; where an outlet has no notices, the pack's
//      first persona posts it;
//   3. moderators get an 'alert' engine event with a link, for the adapter to post in the server's
//      alert channel;
//   4. the event is recorded (safety_events), which also keeps the conversation around it out of
//      training data (training_exclusion_windows).
// Further crisis messages in the same channel extend the quiet period; the calm message and the
// alert are repeated only when the last ones are more than ten minutes old. A database failure
// never stops the response: steps 1-3 do not depend on it.
import type { ChatEvent } from '../core/types.ts';
import type { Logger } from '../log.ts';
import type { Pack } from '../persona/schema.ts';
import type { Outlet } from '../platform/platform.ts';
import type { ChannelSession } from '../session/channel-session.ts';
import type { ModeratorAlert } from '../session/engine.ts';
import type { CrisisDetector } from './detector.ts';
import { alertText, crisisMessage, messageLink } from './response.ts';
import type { SafetyStore } from './store.ts';

/** The calm message and the moderator alert are not repeated within this time in one channel. */
export const REPEAT_AFTER_MS = 10 * 60_000;

export interface SafetyGateOptions {
  detector: CrisisDetector;
  store: SafetyStore;
  /** The pack the message's channel uses (its resources are the fallback, its first persona the voice of last resort). */
  packOf: (event: ChatEvent) => Pack;
  isOptedOut: (platform: string, userId: string) => boolean;
  /** Deliver a moderator alert (the runtime emits the engine's 'alert' event). */
  alert: (alert: ModeratorAlert) => void;
  log: Logger;
  /** Quiet period when the server's settings name none. */
  quietMinutes: number;
  /** Moderators' channel per platform when the server's settings name none (environment). */
  alertChannels?: Readonly<Record<string, string | undefined>>;
  now?: () => number;
}

export type Gate = (event: ChatEvent, session: ChannelSession, outlet: Outlet) => Promise<boolean>;

export function createSafetyGate(o: SafetyGateOptions): Gate {
  const now = o.now ?? Date.now;
  const restored = new WeakSet<ChannelSession>();
  const safely = <T>(what: string, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      o.log.error({ what, err: (err as Error).message }, 'safety store failed; the crisis response goes on without it');
      return undefined;
    }
  };

  return async (event, session, outlet) => {
    // A quiet period outlives a restart.
    if (!restored.has(session)) {
      restored.add(session);
      session.quietUntil = Math.max(session.quietUntil, safely('quiet restore', () => o.store.quietUntil(session.key)) ?? 0);
    }
    const verdict = await o.detector.classify(event.text);
    if (verdict.label === 'ok') return false;

    session.cancel('a crisis message arrived');
    const at = now();
    const settings = safely('settings', () => o.store.spaceSettings(event.platform, event.spaceId)) ?? {};
    const quietUntil = at + (settings.quietMinutes ?? o.quietMinutes) * 60_000;
    session.quietUntil = Math.max(session.quietUntil, quietUntil);

    const last = safely('last actions', () => o.store.lastActions(session.key)) ?? { responded: 0, alerted: 0 };
    const pack = o.packOf(event);
    const responded = at - last.responded >= REPEAT_AFTER_MS && (await respond(outlet, pack, crisisMessage(verdict.category, settings.resources ?? pack.safety.resources), o.log));
    const link = messageLink(event);
    let alerted = false;
    if (at - last.alerted >= REPEAT_AFTER_MS) {
      const alertChannelId = settings.alertChannel ?? o.alertChannels?.[event.platform];
      o.alert({ channelKey: session.key, kind: 'crisis', text: alertText(event, verdict, session.quietUntil, responded || last.responded > 0, link), ...(link ? { link } : {}), ...(alertChannelId ? { alertChannelId } : {}) });
      alerted = true;
    }

    safely('record', () =>
      o.store.recordEvent({
        channelKey: session.key,
        platform: event.platform,
        ...(event.spaceId ? { spaceId: event.spaceId } : {}),
        channelId: event.channelId,
        messageId: event.messageId,
        ...(o.isOptedOut(event.platform, event.author.id) ? {} : { authorId: event.author.id }),
        category: verdict.category ?? 'unspecified',
        source: verdict.source,
        patterns: verdict.patterns,
        responded,
        alerted,
        quietUntil: session.quietUntil,
        at: event.at,
      }),
    );
    // Pattern ids and the category only: the words stay out of logs.
    o.log.warn({ channel: session.key, category: verdict.category, source: verdict.source, patterns: verdict.patterns, responded, alerted, quietUntil: session.quietUntil }, 'crisis message: personas quiet, moderators alerted');
    return true;
  };
}

/** Post the calm message as a notice, or as the pack's first enabled persona when notices fail or are missing. */
async function respond(outlet: Outlet, pack: Pack, text: string, log: Logger): Promise<boolean> {
  if (outlet.notice) {
    try {
      await outlet.notice(text);
      return true;
    } catch (err) {
      log.error({ err: (err as Error).message }, 'crisis notice failed; posting it as the first persona');
    }
  }
  const persona = pack.personas.find((p) => p.enabled) ?? pack.personas[0];
  if (!persona) return false;
  try {
    await outlet.post(persona, text, { offline: false });
    return true;
  } catch (err) {
    log.error({ err: (err as Error).message }, 'crisis message could not be posted');
    return false;
  }
}

