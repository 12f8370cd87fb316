// `mascot start` connects Discord when DISCORD_DIRECTOR_TOKEN is set.
import type { Runtime } from '../../runtime.ts';
import type { PlatformStarter } from '../starters.ts';
import { DiscordPlatform, type PacingOptions } from './discord.ts';
import { readDiscordSettings, resolveIdentities } from './settings.ts';

/** Read the settings, resolve every persona's identity, connect; throws naming what is wrong. */
export async function startDiscord(runtime: Runtime, env: NodeJS.ProcessEnv, options: { pacing?: PacingOptions } = {}): Promise<DiscordPlatform> {
  const settings = readDiscordSettings(env, runtime.packs, runtime.config.MASCOT_PACK);
  const identities = resolveIdentities(settings, env);
  const platform = new DiscordPlatform({ engine: runtime.engine, log: runtime.log, settings, identities, ...options });
  await platform.start();
  return platform;
}

export const discordStarter: PlatformStarter = {
  name: 'discord',
  configured: (env) => Boolean(env.DISCORD_DIRECTOR_TOKEN?.trim()),
  start: (runtime, env) => startDiscord(runtime, env),
};
