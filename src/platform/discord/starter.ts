// `mascot start` connects Discord when DISCORD_DIRECTOR_TOKEN is set.
import { Routes } from 'discord.js';
import type { Runtime } from '../../runtime.ts';
import { deliverAlerts } from '../../safety/alerts.ts';
import type { PlatformStarter } from '../starters.ts';
import { DiscordPlatform, type PacingOptions } from './discord.ts';
import { readDiscordSettings, resolveIdentities } from './settings.ts';

/** Read the settings, resolve every persona's identity, connect; throws naming what is wrong. */
export async function startDiscord(runtime: Runtime, env: NodeJS.ProcessEnv, options: { pacing?: PacingOptions } = {}): Promise<DiscordPlatform> {
  const settings = readDiscordSettings(env, runtime.packs, runtime.config.MASCOT_PACK);
  const identities = resolveIdentities(settings, env);
  const platform = new DiscordPlatform({ engine: runtime.engine, log: runtime.log, settings, identities, ...options });
  await platform.start();
  // Moderator alerts (crises, persona health) go to the moderators' channel, posted by the director.
  deliverAlerts(runtime.engine, 'discord', {
    defaultChannel: runtime.config.MASCOT_SAFETY_ALERT_CHANNEL_DISCORD,
    log: runtime.log,
    send: async (channelId, text) => {
      await platform.director.rest.post(Routes.channelMessages(channelId), { body: { content: text.slice(0, 2000), allowed_mentions: { parse: [] } } });
    },
  });
  return platform;
}

export const discordStarter: PlatformStarter = {
  name: 'discord',
  configured: (env) => Boolean(env.DISCORD_DIRECTOR_TOKEN?.trim()),
  start: (runtime, env) => startDiscord(runtime, env),
};
