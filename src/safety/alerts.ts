// Moderator alerts (the engine's 'alert' event: a crisis, persona health) delivered by a platform
// adapter: to the channel the alert names (a server's safety settings), else to the platform's
// moderators' channel (MASCOT_SAFETY_ALERT_CHANNEL_<PLATFORM>). Without either, the alert is
// logged as undeliverable, which the operator sees; it is never dropped silently.
import type { Logger } from '../log.ts';
import type { Engine, ModeratorAlert } from '../session/engine.ts';

export interface AlertDelivery {
  /** Moderators' channel of this platform when an alert names none. */
  defaultChannel?: string;
  /** Post plain text in a channel, as the app itself, pinging no one. */
  send(channelId: string, text: string): Promise<void>;
  log: Logger;
}

/** Deliver this platform's alerts from now on; returns a function that stops it. */
export function deliverAlerts(engine: Engine, platform: string, o: AlertDelivery): () => void {
  const onAlert = (alert: ModeratorAlert) => {
    if (!alert.channelKey.startsWith(`${platform}:`)) return;
    const target = alert.alertChannelId ?? o.defaultChannel;
    if (!target) {
      o.log.warn({ kind: alert.kind, channel: alert.channelKey, text: alert.text }, `moderator alert not delivered: set MASCOT_SAFETY_ALERT_CHANNEL_${platform.toUpperCase()} or a server's alert channel (mascot safety space)`);
      return;
    }
    o.send(target, alert.text).catch((err: unknown) =>
      o.log.error({ kind: alert.kind, channel: alert.channelKey, alertChannel: target, err: (err as Error).message, text: alert.text }, 'moderator alert could not be posted'),
    );
  };
  engine.on('alert', onAlert);
  return () => engine.off('alert', onAlert);
}
