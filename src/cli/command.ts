// A CLI command: one file per command under src/cli/commands/, discovered by folder.
// Sub-commands are written as "personas validate" (name with a space).

export interface CommandContext {
  /** Positional arguments after the command name. */
  args: string[];
  /** --flag value and --flag (true) options. */
  flags: Record<string, string | true>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export interface Command {
  /** e.g. "chat" or "personas validate". */
  name: string;
  /** One line for `mascot --help`. */
  summary: string;
  /** Full usage text for `mascot <name> --help`. */
  usage: string;
  run(ctx: CommandContext): Promise<number>;
}

/** Thrown for wrong arguments: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Read a numeric flag, or the default; a bad value is a UsageError naming the flag. */
export function numberFlag(flags: CommandContext['flags'], name: string, fallback: number, check: (n: number) => boolean = Number.isFinite): number {
  const v = flags[name];
  if (v === undefined) return fallback;
  const n = typeof v === 'string' ? Number(v) : NaN;
  if (!check(n)) throw new UsageError(`--${name}: "${v === true ? '' : v}" is not an accepted value`);
  return n;
}

export function stringFlag(flags: CommandContext['flags'], name: string): string | undefined {
  const v = flags[name];
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}
