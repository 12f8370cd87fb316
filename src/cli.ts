// The `mascot` command line. Commands live one per file in src/cli/commands/ and are found
// by reading that folder, so adding a command never touches this file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError, type Command, type CommandContext } from './cli/command.ts';

const COMMANDS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cli', 'commands');

export async function loadCommands(): Promise<Command[]> {
  const files = fs.readdirSync(COMMANDS_DIR).filter((f) => f.endsWith('.ts')).sort();
  const commands: Command[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(COMMANDS_DIR, f)).href)) as { default?: Command | Command[] };
    if (mod.default) commands.push(...(Array.isArray(mod.default) ? mod.default : [mod.default]));
  }
  return commands.sort((a, b) => a.name.localeCompare(b.name));
}

export function parseArgs(argv: string[]): { words: string[]; flags: Record<string, string | true> } {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) flags[a.slice(2)] = argv[++i]!;
      else flags[a.slice(2)] = true;
    } else if (a === '-h') flags.help = true;
    else words.push(a);
  }
  return { words, flags };
}

function help(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'mascot: a group of persona companions for Discord, Slack and the console, with a director that decides who speaks next.',
    '',
    'Usage: mascot <command> [options]      (npx mascot ... in a checkout)',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `mascot <command> --help` for a command\'s options. Configuration comes from the environment; see .env.example.',
  ].join('\n');
}

export async function main(argv: string[], io: Partial<Pick<CommandContext, 'stdout' | 'stderr' | 'stdin' | 'env'>> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const commands = await loadCommands();
  const { words, flags } = parseArgs(argv);
  if (words.length === 0) {
    stdout.write(`${help(commands)}\n`);
    return flags.help ? 0 : 2;
  }
  // Longest command name matching the leading words ("personas validate" before "personas").
  let command: Command | undefined;
  let used = 0;
  for (const c of commands) {
    const parts = c.name.split(' ');
    if (parts.length > used && parts.every((p, i) => words[i] === p)) {
      command = c;
      used = parts.length;
    }
  }
  if (!command) {
    stderr.write(`mascot: unknown command "${words.join(' ')}"\n\n${help(commands)}\n`);
    return 2;
  }
  if (flags.help) {
    stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run({ args: words.slice(used), flags, stdout, stderr, stdin: io.stdin ?? process.stdin, env: io.env ?? process.env });
  } catch (err) {
    if (err instanceof UsageError) {
      stderr.write(`mascot ${command.name}: ${err.message}\n\n${command.usage}\n`);
      return 2;
    }
    stderr.write(`mascot ${command.name}: ${(err as Error).message}\n`);
    return 1;
  }
}
