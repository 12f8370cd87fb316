// Schemas of pack and persona files. Every file is validated against these at start-up and by
// `mascot personas validate`; errors name the file, the field and what is wrong.
import { z } from 'zod';

const id = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be lowercase letters, digits and dashes, starting with a letter (at most 32)');

/**
 * The phase of helping a strategy belongs to (Hill's helping-skills model): exploration first
 * (be heard), then insight (make sense of it), then action (one step). The heuristic director
 * moves through the phases as the conversation meets each need.
 */
export const PHASES = ['explore', 'insight', 'action'] as const;
export type Phase = (typeof PHASES)[number];

export const strategySchema = z.strictObject({
  label: z.string().min(1),
  phase: z.enum(PHASES),
  /** The one-line instruction the director gives the speaker. */
  instruction: z.string().min(1).max(300),
});
export type Strategy = z.infer<typeof strategySchema>;

export const directorSettingsSchema = z.strictObject({
  policy: z.string().min(1).default('heuristic'),
  /** Bot turns after one human message, at most. */
  maxBotTurns: z.number().int().min(0).max(8).default(2),
  /** Every allowed action keeps at least this probability (for off-policy evaluation). */
  floor: z.number().min(0).max(0.05).default(0.01),
  /** Pause between bot turns, in milliseconds (human-like pacing). */
  pacingMs: z.number().int().min(0).max(60_000).default(1200),
});
export type DirectorSettings = z.infer<typeof directorSettingsSchema>;

export const packSchema = z.strictObject({
  id,
  name: z.string().min(1),
  description: z.string().min(1),
  director: directorSettingsSchema.prefault({}),
  strategies: z.record(id, strategySchema).refine((s) => Object.keys(s).length > 0, 'must declare at least one strategy'),
  safety: z.strictObject({
    /** Shown on a crisis hit: crisis lines and who to contact. */
    resources: z.string().min(1),
  }),
});
export type PackFile = z.infer<typeof packSchema>;

const exampleSchema = z.strictObject({
  strategy: id,
  /** What the human said. */
  context: z.string().min(1),
  /** What this persona answered. */
  response: z.string().min(1),
});

export const generationSchema = z.strictObject({
  /** Model name at the OpenAI-compatible endpoint; a per-persona LoRA adapter name works here. */
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).default(0.8),
  maxTokens: z.number().int().min(16).max(4096).default(220),
});

export const personaSchema = z.strictObject({
  id,
  displayName: z.string().min(1).max(32),
  avatarUrl: z.url().optional(),
  role: z.string().min(1).max(80),
  description: z.string().min(1),
  /** Voice and style rules, one per item. */
  voice: z.array(z.string().min(1)).min(1),
  /** Things this persona never does. */
  never: z.array(z.string().min(1)).default([]),
  strategies: z.array(id).min(1),
  /** 0..1: how readily the director picks this persona. */
  talkativeness: z.number().min(0).max(1).default(0.5),
  examples: z.array(exampleSchema).default([]),
  generation: generationSchema.prefault({}),
  identity: z
    .strictObject({
      discord: z.strictObject({ tokenEnv: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an environment variable name') }).optional(),
      slack: z
        .strictObject({
          tokenEnv: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an environment variable name').optional(),
          iconEmoji: z.string().regex(/^:[a-z0-9_+-]+:$/, 'must look like :emoji_name:').optional(),
        })
        .optional(),
    })
    .default({}),
  enabled: z.boolean().default(true),
});
export type Persona = z.infer<typeof personaSchema>;

/** A pack as the running system uses it: the pack file plus its personas, in file-name order. */
export interface Pack extends PackFile {
  personas: Persona[];
  /** Folder it was loaded from. */
  dir: string;
}

/** Turn a zod error into lines that name the field and what is wrong. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    return `${path}: ${issue.message}`;
  });
}
