// Speaker training data in the formats Hugging Face TRL reads, one JSON object per line:
//   trl-grpo  prompt-only conversations ({"prompt": [system, user]}) for GRPOTrainer, one per logged
//             persona turn, with the persona, strategy and directive as extra columns (TRL passes extra
//             columns to reward functions)
//   trl-dpo   preference pairs ({"prompt", "chosen", "rejected"} in conversational form) for DPOTrainer
//             and RewardTrainer, with persona, source and scores
//   jsonl     everything with its context as plain records: logged persona turns and preference pairs
// Prompts are built exactly as the speaker builds them at serve time (src/speaker/prompt.ts).
// Privacy: records that hold words of an opted-out or forgotten person are left out, and as a
// second line of defence any record containing the text of an opted-out person's stored message is
// dropped; people's names become "Person 1", "Person 2" per record; e-mails, phone numbers,
// mentions and links are redacted (src/privacy/redact.ts).
// Crisis: the conversation around a crisis the safety gate recorded (training_exclusion_windows,
// migrations/006) is not training data. The store never reads logged turns inside those windows
// nor stored pairs whose context reaches into one; as a second line of defence any record holding
// the text of a person's message from inside a window is dropped, wherever it was quoted.
import type { Directive } from '../core/types.ts';
import type { Pack } from '../persona/schema.ts';
import { redact } from '../privacy/redact.ts';
import { examplePreferences } from '../reward/preferences.ts';
import { toTranscript, type ContextTurn, type PreferencePair } from '../reward/rubric.ts';
import { FidelityStore } from '../reward/store.ts';
import { buildPrompt } from '../speaker/prompt.ts';
import type { Db } from '../store/db.ts';

export const EXPORT_FORMATS = ['trl-grpo', 'trl-dpo', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  format: ExportFormat;
  /** Only this persona (one LoRA adapter per persona). */
  personaId?: string;
  /** Add the offline bootstrap pairs from persona examples (labelled source "examples"). */
  withExamples?: boolean;
  /** Feedback pairs need this margin on the 1-5 scale. */
  minMargin?: number;
}

export interface ExportRecord {
  personaId: string;
  record: Record<string, unknown>;
}

export interface ExportResult {
  records: ExportRecord[];
  /** Why records were left out, with counts. */
  skipped: Record<string, number>;
}

const GENERIC_INSTRUCTION = 'Take your next turn in your own role.';

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** Build the records of one pack (write them with `toJsonl`). */
export function exportPack(db: Db, pack: Pack, options: ExportOptions): ExportResult {
  const store = new FidelityStore(db);
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  const keep = (p: { personaId: string }) => !options.personaId || p.personaId === options.personaId;
  const records: ExportRecord[] = [];

  if (options.format === 'trl-grpo' || options.format === 'jsonl') {
    for (const turn of store.loggedAuthored(pack.id).filter(keep)) {
      const persona = pack.personas.find((p) => p.id === turn.personaId);
      if (!persona) {
        skip('persona no longer in the pack');
        continue;
      }
      const strategy = turn.strategy ?? undefined;
      const directive: Directive = { personaId: persona.id, strategy: strategy ?? '', instruction: (strategy && pack.strategies[strategy]?.instruction) || GENERIC_INSTRUCTION };
      const names = pseudonyms(turn.context);
      const context = privateContext(turn.context, names);
      const prompt = promptMessages(pack, persona.id, directive, context);
      if (options.format === 'trl-grpo') records.push({ personaId: persona.id, record: { prompt, persona: persona.id, strategy: strategy ?? null, directive: directive.instruction, pack: pack.id } });
      else
        records.push({
          personaId: persona.id,
          record: { type: 'turn', pack: pack.id, persona: persona.id, strategy: strategy ?? null, directive: directive.instruction, context, response: redact(turn.text, { names }), source: 'logged' },
        });
    }
  }

  if (options.format === 'trl-dpo' || options.format === 'jsonl') {
    const pairs: PreferencePair[] = [...store.pairs(pack.id), ...store.feedbackPairs(pack.id, options.minMargin ?? 0.5), ...(options.withExamples ? examplePreferences(pack).pairs : [])];
    for (const pair of pairs.filter(keep)) {
      if (!pack.personas.some((p) => p.id === pair.personaId)) {
        skip('persona no longer in the pack');
        continue;
      }
      const names = pseudonyms([...pair.context, ...(pair.rejectedContext ?? [])]);
      const context = privateContext(pair.context, names);
      const base = { persona: pair.personaId, source: pair.source, judge: pair.judge ?? null, chosen_score: pair.chosenScore ?? null, rejected_score: pair.rejectedScore ?? null, pack: pack.id };
      if (options.format === 'jsonl') {
        records.push({
          personaId: pair.personaId,
          record: {
            type: 'preference',
            ...base,
            context,
            chosen: redact(pair.chosen, { names }),
            rejected: redact(pair.rejected, { names }),
            ...(pair.rejectedContext ? { rejected_context: privateContext(pair.rejectedContext, names) } : {}),
          },
        });
        continue;
      }
      if (pair.rejectedContext) {
        skip('pair from two different moments (DPO needs one prompt)');
        continue;
      }
      const directive: Directive = { personaId: pair.personaId, strategy: '', instruction: GENERIC_INSTRUCTION };
      records.push({
        personaId: pair.personaId,
        record: {
          prompt: promptMessages(pack, pair.personaId, directive, context),
          chosen: [{ role: 'assistant', content: redact(pair.chosen, { names }) }],
          rejected: [{ role: 'assistant', content: redact(pair.rejected, { names }) }],
          ...base,
        },
      });
    }
  }

  // Second line of defence: nothing an opted-out person wrote, and nothing a person wrote around a
  // crisis, may leave, even quoted.
  const optedOut = forbiddenTexts(db, OPTED_OUT_MESSAGES);
  const crisis = forbiddenTexts(db, CRISIS_WINDOW_MESSAGES);
  const safe = records.filter((r) => {
    const json = JSON.stringify(r.record);
    if (optedOut.some((t) => json.includes(t))) {
      skip("holds an opted-out person's words");
      return false;
    }
    if (crisis.some((t) => json.includes(t))) {
      skip('holds words from around a crisis');
      return false;
    }
    return true;
  });
  return { records: safe, skipped };
}

export function toJsonl(records: readonly ExportRecord[]): string {
  return records.map((r) => `${JSON.stringify(r.record)}\n`).join('');
}

/** People's names in a context -> "Person 1", "Person 2", in order of appearance (personas keep theirs). */
function pseudonyms(context: readonly ContextTurn[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const t of context) if (!t.isBot && !names.has(t.name)) names.set(t.name, `Person ${names.size + 1}`);
  return names;
}

function privateContext(context: readonly ContextTurn[], names: Map<string, string>): ContextTurn[] {
  return context.map((t) => ({ ...t, name: t.isBot ? t.name : (names.get(t.name) ?? 'Person'), text: redact(t.text, { names }) }));
}

function promptMessages(pack: Pack, personaId: string, directive: Directive, context: ContextTurn[]): Message[] {
  const persona = pack.personas.find((p) => p.id === personaId)!;
  return buildPrompt({ pack, persona, others: pack.personas.filter((p) => p.id !== personaId), directive, transcript: toTranscript(context) }).map((m) => ({ role: m.role, content: m.content }));
}

/** People's stored messages that must not leave: those of opted-out people. */
const OPTED_OUT_MESSAGES = `SELECT m.text FROM messages m JOIN opt_outs o ON o.user_id = m.author_id AND m.channel_key LIKE o.platform || ':%' WHERE m.is_bot = 0`;

/** ... and those inside a crisis window (migrations/006). */
const CRISIS_WINDOW_MESSAGES = `SELECT m.text FROM messages m WHERE m.is_bot = 0
  AND EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = m.channel_key AND m.at BETWEEN w.from_at AND w.until_at)`;

/** Texts a query selects, long enough to be someone's words rather than a common phrase. */
function forbiddenTexts(db: Db, query: string): string[] {
  const rows = db.prepare(query).all() as { text: string }[];
  // As JSON string content, and as the redaction would have left it.
  return rows.flatMap((r) => [r.text, redact(r.text)]).map((t) => JSON.stringify(t).slice(1, -1)).filter((t) => t.length >= 12);
}
