// Shared by commands that run the product: configuration from the environment, a logger, the runtime.
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { createRuntime, type Runtime } from '../runtime.ts';
import type { CommandContext } from './command.ts';

export function openRuntime(ctx: CommandContext): Runtime {
  const config = loadConfig(ctx.env);
  const log = createLogger(config.MASCOT_LOG_LEVEL);
  return createRuntime(config, log);
}
