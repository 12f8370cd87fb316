// Shared by commands that run the product: configuration from the environment, a logger, the runtime.
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { createRuntime, type Runtime } from '../runtime.ts';
import type { CommandContext } from './command.ts';

/**
 * `interactive`: the console companion shares the terminal with the logs, so unless
 * MASCOT_LOG_LEVEL says otherwise only warnings and errors are shown there.
 */
export function openRuntime(ctx: CommandContext, options: { interactive?: boolean } = {}): Runtime {
  const config = loadConfig(ctx.env);
  const quiet = options.interactive && !ctx.env.MASCOT_LOG_LEVEL?.trim();
  const log = createLogger(quiet ? 'warn' : config.MASCOT_LOG_LEVEL);
  return createRuntime(config, log);
}
