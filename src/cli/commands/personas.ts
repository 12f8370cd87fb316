// `mascot personas validate [dir]`: check pack and persona files, naming every problem.
import path from 'node:path';
import { loadPacks, PERSONAS_DIR, PersonaFileError } from '../../persona/loader.ts';
import type { Command } from '../command.ts';

const validate: Command = {
  name: 'personas validate',
  summary: 'check persona packs (every file, every field) and list what is wrong',
  usage: `Usage: mascot personas validate [dir]

Validates every pack under dir (default: the shipped personas/ folder, or MASCOT_PERSONAS_DIR):
each sub-folder with a pack.yaml and one <persona-id>.yaml per persona. Exits 1 listing every
problem with its file and field.`,
  async run(ctx) {
    const dir = path.resolve(ctx.args[0] ?? ctx.env.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    try {
      const packs = loadPacks(dir);
      for (const pack of packs.values()) {
        ctx.stdout.write(`ok  ${pack.id}: ${pack.personas.map((p) => `${p.id} (${p.strategies.join(', ')})`).join('; ')}\n`);
      }
      return 0;
    } catch (err) {
      if (!(err instanceof PersonaFileError)) throw err;
      for (const line of err.problems) ctx.stderr.write(`error  ${line}\n`);
      ctx.stderr.write(`${err.problems.length} problem(s) in ${dir}\n`);
      return 1;
    }
  },
};

export default validate;
