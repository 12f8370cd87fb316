// `mascot start` connects Slack when SLACK_BOT_TOKEN is set (with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET).
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
    return platform;
  },
};
