// The console companion: the embedded default platform. One line per turn, `Name: text`;
// /explain shows each directive with its probabilities; /pack switches pack; /quit leaves.
// Interactive input is read as it comes (a new line barges in on a running round); piped input
// is read line by line, each round finishing before the next line, and the process ends at EOF.
import readline from 'node:readline';
import type { ChatEvent, Decision } from '../core/types.ts';
import type { Persona } from '../persona/schema.ts';
import type { Runtime } from '../runtime.ts';
import { channelKeyOf } from '../session/engine.ts';
import type { Outlet } from './platform.ts';

export interface ConsoleOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
  humanName?: string;
  explain?: boolean;
  pack?: string;
  policy?: string;
}

const COLOURS = [36, 35, 33, 32, 34, 91, 96, 95];

export class ConsoleCompanion {
  private explain: boolean;
  private readonly channelId = `session-${Date.now().toString(36)}`;
  private readonly key: string;
  private readonly colour: boolean;
  private messageCount = 0;
  private postCount = 0;
  private readline: readline.Interface | undefined;
  private stopped = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly options: ConsoleOptions,
  ) {
    this.explain = options.explain ?? false;
    this.key = channelKeyOf('console', this.channelId);
    this.colour = options.output.isTTY === true && !process.env.NO_COLOR;
  }

  private write(line: string): void {
    this.options.output.write(`${line}\n`);
  }

  private paint(code: number, text: string): string {
    return this.colour ? `\x1b[${code}m${text}\x1b[0m` : text;
  }

  private personaColour(persona: Persona): number {
    const pack = this.runtime.packs.get(this.runtime.engine.channelConfig(this.key).pack);
    const index = pack?.personas.findIndex((p) => p.id === persona.id) ?? 0;
    return COLOURS[Math.max(0, index) % COLOURS.length]!;
  }

  readonly outlet: Outlet = {
    post: async (persona, text, options) => {
      const label = options.offline ? ` ${this.paint(2, '[offline voice]')}` : '';
      this.write(`${this.paint(this.personaColour(persona), persona.displayName)}: ${text.replace(/\s*\n+\s*/g, ' ')}${label}`);
      return { messageId: `bot-${++this.postCount}` };
    },
    notice: async (text) => this.write(this.paint(2, text)),
  };

  private showDecision = (channelKey: string, decision: Decision) => {
    if (!this.explain || channelKey !== this.key) return;
    const ranked = decision.actions.map((a, i) => [a, decision.probabilities[i]!] as const).sort((a, b) => b[1] - a[1]).slice(0, 4);
    const chosen = decision.action.kind === 'yield' ? 'yield' : `${decision.action.personaId}:${decision.action.strategy}`;
    const top = ranked.map(([a, p]) => `${a} ${p.toFixed(2)}`).join(', ');
    this.write(this.paint(2, `  [director ${decision.policyId}] ${chosen} p=${decision.propensity.toFixed(2)} | ${top} | ${decision.reason}`));
  };

  /** Handle one line of input; returns false when the person asked to leave. */
  private async handleLine(line: string): Promise<boolean> {
    const text = line.trim();
    if (text === '/quit' || text === '/exit') return false;
    if (text === '/explain') {
      this.explain = !this.explain;
      this.write(this.paint(2, `(explain ${this.explain ? 'on' : 'off'})`));
      return true;
    }
    if (text === '/help') {
      this.write(this.paint(2, '(commands: /explain toggles the director\'s reasoning, /pack <name> switches pack, /policy <name> switches director, /quit leaves)'));
      return true;
    }
    const command = /^\/(pack|policy)(?:\s+(\S+))?$/.exec(text);
    if (command) {
      this.switchSetting(command[1] as 'pack' | 'policy', command[2]);
      return true;
    }
    if (text.startsWith('/')) {
      this.write(this.paint(2, `(unknown command ${text.split(/\s/)[0]}; try /help)`));
      return true;
    }
    const event: ChatEvent = {
      platform: 'console',
      channelId: this.channelId,
      messageId: `human-${++this.messageCount}`,
      author: { id: 'console-user', name: this.options.humanName ?? 'You', isBot: false },
      text,
      mentions: [],
      at: Date.now(),
    };
    const round = this.runtime.engine.receive(event, this.outlet);
    // Piped input: let each round finish before the next line. Interactive: keep reading (barge-in).
    if (!this.options.input.isTTY) await round;
    else round.catch((err: Error) => this.write(this.paint(31, `(error: ${err.message})`)));
    return true;
  }

  private choices(field: 'pack' | 'policy'): string[] {
    return field === 'pack' ? [...this.runtime.packs.keys()] : [...this.runtime.engine.policies.keys()];
  }

  /** Store the console channel's pack or policy; false (with a note unless quiet) for an unknown name. */
  private switchSetting(field: 'pack' | 'policy', value: string | undefined, quiet = false): boolean {
    if (!value || !this.choices(field).includes(value)) {
      if (!quiet) this.write(this.paint(2, `(${field} must be one of: ${this.choices(field).join(', ')})`));
      return false;
    }
    this.runtime.store.setChannelSetting(this.key, field, value, 'console-user');
    if (quiet) return true;
    if (field === 'pack') this.introduce();
    else this.write(this.paint(2, `(director policy: ${value})`));
    return true;
  }

  private introduce(): void {
    const pack = this.runtime.packs.get(this.runtime.engine.channelConfig(this.key).pack)!;
    this.write(this.paint(2, `${pack.name}: ${pack.personas.map((p) => `${p.displayName} (${p.role})`).join(', ')}.`));
  }

  /** Run until /quit or end of input. */
  async run(): Promise<void> {
    const { runtime, options } = this;
    for (const field of ['pack', 'policy'] as const) {
      const value = options[field];
      if (value && !this.switchSetting(field, value, true)) throw new Error(`--${field}: "${value}" is not one of ${this.choices(field).join(', ')}`);
    }
    runtime.engine.on('decision', this.showDecision);
    if (options.input.isTTY) {
      this.introduce();
      if (runtime.generator.name === 'offline')
        this.write(this.paint(2, 'No model server is configured: the personas speak with the built-in offline voice (marked [offline voice]). Set MASCOT_LLM_BASE_URL to use a model.'));
      this.write(this.paint(2, 'Type a message and press Enter. /explain shows the director\'s choices, /pack meeting switches pack, /quit leaves.'));
    }
    const rl = readline.createInterface({ input: options.input, terminal: false });
    this.readline = rl;
    try {
      for await (const line of rl) {
        if (this.stopped || !(await this.handleLine(line))) {
          runtime.engine.cancelAll('the person left');
          break;
        }
      }
    } finally {
      rl.close();
      await runtime.engine.idle();
      runtime.engine.off('decision', this.showDecision);
    }
  }

  /** Graceful shutdown (SIGTERM/SIGINT): cancel the running round, read no further input; run() then returns. */
  stop(reason: string): void {
    this.stopped = true;
    this.runtime.engine.cancelAll(reason);
    this.readline?.close();
  }
}
