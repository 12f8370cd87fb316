// `mascot export`: speaker training data for TRL (GRPO prompts, DPO pairs) or plain JSONL, with
// opted-out people left out and personal details redacted (src/export/trl.ts).
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config.ts';
import { EXPORT_FORMATS, exportPack, toJsonl, type ExportFormat, type ExportRecord } from '../../export/trl.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command } from '../command.ts';

const exportCommand: Command = {
  name: 'export',
  summary: 'write speaker training data (TRL GRPO prompts, DPO pairs, or JSONL) from the logged sessions',
  usage: `Usage: mascot export --format trl-grpo|trl-dpo|jsonl --out PATH [options]

  --format F        trl-grpo: prompt-only conversations with persona, strategy and directive (GRPOTrainer)
                    trl-dpo:  prompt / chosen / rejected conversations (DPOTrainer, RewardTrainer)
                    jsonl:    logged persona turns and preference pairs with their context
  --out PATH        file to write (or a folder with --per-persona)
  --pack P          pack to export (default: every pack)
  --persona ID      only this persona
  --per-persona     one file per persona in the folder --out (one LoRA adapter per persona)
  --with-examples   add the offline bootstrap pairs from persona examples (source "examples")
  --min-margin X    feedback pairs need this difference on the 1-5 scale (default 0.5)

Reads MASCOT_DB. Opted-out and forgotten people are left out; names become "Person 1", "Person 2";
e-mails, phone numbers, mentions and links are redacted. See docs/persona-fidelity.md.`,
  async run(ctx) {
    const format = stringFlag(ctx.flags, 'format');
    if (!format || !(EXPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
    const out = stringFlag(ctx.flags, 'out');
    if (!out) throw new UsageError('--out is required');
    const config = loadConfig(ctx.env);
    const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    const packId = stringFlag(ctx.flags, 'pack');
    if (packId && !packs.has(packId)) throw new UsageError(`--pack: "${packId}" is not a pack (available: ${[...packs.keys()].join(', ')})`);
    const personaId = stringFlag(ctx.flags, 'persona');
    const minMargin = numberFlag(ctx.flags, 'min-margin', 0.5, (n) => n >= 0 && n <= 4);
    if (!fs.existsSync(config.MASCOT_DB)) throw new Error(`no database at ${config.MASCOT_DB} (MASCOT_DB): nothing has been logged yet`);
    const db = openDatabase(config.MASCOT_DB);
    try {
      const records: ExportRecord[] = [];
      const skipped: Record<string, number> = {};
      for (const pack of packId ? [packs.get(packId)!] : packs.values()) {
        const result = exportPack(db, pack, { format: format as ExportFormat, personaId, withExamples: ctx.flags['with-examples'] === true, minMargin });
        records.push(...result.records);
        for (const [why, n] of Object.entries(result.skipped)) skipped[why] = (skipped[why] ?? 0) + n;
      }
      const written: string[] = [];
      if (ctx.flags['per-persona'] === true) {
        fs.mkdirSync(out, { recursive: true });
        const byPersona = new Map<string, ExportRecord[]>();
        for (const r of records) byPersona.set(r.personaId, [...(byPersona.get(r.personaId) ?? []), r]);
        for (const [persona, rs] of byPersona) {
          const file = path.join(out, `${persona}.${format}.jsonl`);
          fs.writeFileSync(file, toJsonl(rs));
          written.push(`${file} (${rs.length})`);
        }
      } else {
        fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
        fs.writeFileSync(out, toJsonl(records));
        written.push(`${out} (${records.length})`);
      }
      ctx.stdout.write(`wrote ${records.length} ${format} record(s): ${written.join(', ') || 'no files (nothing to export)'}\n`);
      for (const [why, n] of Object.entries(skipped)) ctx.stdout.write(`left out ${n}: ${why}\n`);
      return 0;
    } finally {
      db.close();
    }
  },
};

export default exportCommand;
