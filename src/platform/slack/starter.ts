// `mascot start` connects Slack when SLACK_BOT_TOKEN is set (with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET).
import { deliverAlerts } from '../../safety/alerts.ts';
import type { PlatformStarter } from '../starters.ts';
import { allPersonas, SlackPlatform } from './platform.ts';
import { loadSlackSettings, slackConfigured } from './settings.ts';

export const slackStarter: PlatformStarter = {
  name: 'slack',
  configured: slackConfigured,
  async start(runtime, env) {
    const platform = new SlackPlatform(runtime, loadSlackSettings(env, allPersonas(runtime)));
    try {
      await platform.start();
    } catch (err) {
      await platform.stop();
      throw err;
    }
    // Moderator alerts (crises, persona health) go to the moderators' channel, posted by the app itself.
    deliverAlerts(runtime.engine, 'slack', { defaultChannel: runtime.config.MASCOT_SAFETY_ALERT_CHANNEL_SLACK, log: runtime.log, send: (channel, text) => platform.postNotice(channel, text) });
    return platform;
  },
};
