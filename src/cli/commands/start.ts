// `mascot start` (what `npm start` runs): connect every configured platform, or run the console
// companion when none is configured.
import { starters } from '../../platform/starters.ts';
import type { Platform } from '../../platform/platform.ts';
import type { Command } from '../command.ts';
import { openRuntime } from '../open-runtime.ts';
import { runConsole } from './chat.ts';

const start: Command = {
  name: 'start',
  summary: 'run the companion: Discord and/or Slack when their tokens are set, else the console',
  usage: `Usage: mascot start [console options]

Starts every platform whose credentials are in the environment (see .env.example). With none,
runs the console companion (same options as \`mascot chat\`). Stops cleanly on SIGINT/SIGTERM.`,
  async run(ctx) {
    const configured = starters.filter((s) => s.configured(ctx.env));
    if (configured.length === 0) return runConsole(ctx);

    const runtime = openRuntime(ctx);
    const platforms: Platform[] = [];
    const stopAll = async () => {
      runtime.engine.cancelAll('shutdown');
      await Promise.allSettled(platforms.map((p) => p.stop()));
      await runtime.engine.idle();
      runtime.close();
    };
    try {
      for (const starter of configured) {
        platforms.push(await starter.start(runtime, ctx.env));
        runtime.log.info({ platform: starter.name }, 'platform connected');
      }
    } catch (err) {
      await stopAll();
      throw err;
    }
    await new Promise<void>((resolve) => {
      const onSignal = (signal: string) => {
        runtime.log.info({ signal }, 'shutting down');
        resolve();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
    });
    await stopAll();
    return 0;
  },
};

export default start;
