// `mascot chat`: the console companion, whatever platforms are configured.
import { ConsoleCompanion } from '../../platform/console.ts';
import { stringFlag, type Command, type CommandContext } from '../command.ts';
import { openRuntime } from '../open-runtime.ts';

export async function runConsole(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx, { interactive: true });
  try {
    const companion = new ConsoleCompanion(runtime, {
      input: ctx.stdin,
      output: ctx.stdout as NodeJS.WritableStream & { isTTY?: boolean },
      humanName: stringFlag(ctx.flags, 'name') ?? 'You',
      explain: ctx.flags.explain === true,
      pack: stringFlag(ctx.flags, 'pack'),
      policy: stringFlag(ctx.flags, 'policy'),
    });
    // SIGTERM/SIGINT: cancel the running round and stop reading; the database then closes cleanly below.
    const stop = (signal: NodeJS.Signals) => {
      runtime.log.info({ signal }, 'shutting down');
      companion.stop(`shutdown (${signal})`);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    try {
      await companion.run();
    } finally {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
    }
    return 0;
  } finally {
    runtime.close();
  }
}

const chat: Command = {
  name: 'chat',
  summary: 'talk with the personas in this terminal (the console companion)',
  usage: `Usage: mascot chat [--pack support|meeting] [--policy heuristic|round-robin|random] [--explain] [--name NAME]

Talk with a pack of personas in the terminal. Each turn prints as one line "Name: text".
In the chat: /explain toggles the director's reasoning, /pack <name> switches pack,
/policy <name> switches director policy, /quit leaves. With piped input, each line is one
message, each round finishes before the next line, and the command exits 0 at end of input:
  printf 'I moved abroad and feel so alone\\n' | mascot chat`,
  run: runConsole,
};

export default chat;
