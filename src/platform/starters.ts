// Platforms `mascot start` can connect, each enabled by its own environment variables.
// With none configured, `mascot start` runs the console companion.
import type { Runtime } from '../runtime.ts';
import type { Platform } from './platform.ts';
import { slackStarter } from './slack/starter.ts';
import { discordStarter } from './discord/starter.ts';

export interface PlatformStarter {
  name: string;
  /** True when the environment holds this platform's credentials. */
  configured(env: NodeJS.ProcessEnv): boolean;
  /** Connect; throws a clear error naming what is missing or rejected. */
  start(runtime: Runtime, env: NodeJS.ProcessEnv): Promise<Platform>;
}

/** Adapters register here (one line each). */
export const starters: PlatformStarter[] = [slackStarter, discordStarter];
