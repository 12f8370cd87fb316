// Slack settings from the environment, validated once at start-up. Every variable is documented in
// .env.example and docs/slack.md; a wrong value fails start-up naming the variable and what is accepted.
import { z } from 'zod';
import type { Persona } from '../../persona/schema.ts';

export type ReceiverMode = 'socket' | 'http';
/** `apps`: one Slack app per persona; `customize`: one app posting each persona's name and icon. */
export type IdentityMode = 'apps' | 'customize';

export interface SlackSettings {
  /** Bot token of the director app: it receives events, owns the slash command, reads threads. */
  botToken: string;
  receiver: ReceiverMode;
  appToken?: string;
  signingSecret?: string;
  port: number;
  host?: string;
  eventsPath: string;
  apiUrl?: string;
  identity: IdentityMode | 'auto';
  moderatorIds: string[];
  command: string;
  /** Least time between two posts in one Slack channel. */
  pacingMs: number;
  /** Persona id -> bot token of its own app (apps mode). */
  personaTokens: Map<string, string>;
}

const userId = /^[UW][A-Z0-9]{2,}$/;

const schema = z.object({
  SLACK_BOT_TOKEN: z.string().regex(/^xox[bp]-/, 'must be a bot token starting with xoxb-'),
  SLACK_APP_TOKEN: z.string().regex(/^xapp-/, 'must be an app-level token starting with xapp-').optional(),
  SLACK_SIGNING_SECRET: z.string().min(8, 'must be the app\'s signing secret').optional(),
  SLACK_PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  SLACK_HOST: z.string().min(1).optional(),
  SLACK_EVENTS_PATH: z.string().regex(/^\/\S*$/, 'must be a path starting with /').default('/slack/events'),
  SLACK_API_URL: z.url().optional(),
  SLACK_IDENTITY_MODE: z.enum(['auto', 'apps', 'customize']).default('auto'),
  SLACK_MODERATOR_IDS: z
    .string()
    .transform((s) => s.split(/[\s,]+/).filter(Boolean))
    .refine((ids) => ids.every((id) => userId.test(id)), 'must be Slack user ids such as U012ABCDEF, separated by commas')
    .optional(),
  SLACK_COMMAND: z.string().regex(/^\/[a-z0-9_-]{1,31}$/, 'must be a slash command such as /mascot').default('/mascot'),
  SLACK_PACING_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
});

const KEYS = Object.keys(schema.shape) as (keyof typeof schema.shape)[];

export class SlackSettingsError extends Error {
  constructor(problems: string[]) {
    super(`invalid Slack configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'SlackSettingsError';
  }
}

/** True when the environment asks for Slack (a director bot token is set). */
export function slackConfigured(env: NodeJS.ProcessEnv): boolean {
  return (env.SLACK_BOT_TOKEN ?? '').trim() !== '';
}

/** The environment variable holding a persona's own bot token (its file may name another). */
export function personaTokenEnv(persona: Persona): string {
  return persona.identity.slack?.tokenEnv ?? `SLACK_BOT_TOKEN_${persona.id.toUpperCase().replace(/-/g, '_')}`;
}

/** Read SLACK_* variables (empty counts as unset) and the persona token variables. */
export function loadSlackSettings(env: NodeJS.ProcessEnv, personas: readonly Persona[]): SlackSettings {
  const raw: Record<string, string> = {};
  for (const key of KEYS) {
    const v = env[key]?.trim();
    if (v) raw[key] = v;
  }
  const parsed = schema.safeParse(raw);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const key = String(i.path[0]);
        // Secrets are never echoed back, only named.
        const shown = /TOKEN|SECRET/.test(key) ? '' : ` (got "${raw[key] ?? ''}")`;
        return `${key}: ${i.message}${shown}`;
      });
  const personaTokens = new Map<string, string>();
  for (const persona of personas) {
    const name = personaTokenEnv(persona);
    const token = env[name]?.trim();
    if (!token) continue;
    if (!/^xoxb-/.test(token)) problems.push(`${name} (persona ${persona.id}): must be a bot token starting with xoxb-`);
    else personaTokens.set(persona.id, token);
  }
  if (!parsed.success || problems.length > 0) throw new SlackSettingsError(problems);
  const s = parsed.data;
  if (!s.SLACK_APP_TOKEN && !s.SLACK_SIGNING_SECRET)
    throw new SlackSettingsError(['set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP events endpoint) next to SLACK_BOT_TOKEN']);
  if (s.SLACK_IDENTITY_MODE === 'apps' && personaTokens.size === 0)
    throw new SlackSettingsError([`SLACK_IDENTITY_MODE=apps needs a bot token per persona (e.g. ${personas[0] ? personaTokenEnv(personas[0]) : 'SLACK_BOT_TOKEN_<PERSONA>'})`]);
  return {
    botToken: s.SLACK_BOT_TOKEN,
    receiver: s.SLACK_APP_TOKEN ? 'socket' : 'http',
    appToken: s.SLACK_APP_TOKEN,
    signingSecret: s.SLACK_SIGNING_SECRET,
    port: s.SLACK_PORT,
    host: s.SLACK_HOST,
    eventsPath: s.SLACK_EVENTS_PATH,
    apiUrl: s.SLACK_API_URL,
    identity: s.SLACK_IDENTITY_MODE,
    moderatorIds: s.SLACK_MODERATOR_IDS ?? [],
    command: s.SLACK_COMMAND,
    pacingMs: s.SLACK_PACING_MS,
    personaTokens,
  };
}
