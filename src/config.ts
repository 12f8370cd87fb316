// Configuration from the environment, validated once at start-up. Every variable is documented
// in .env.example; an invalid value fails start-up naming the variable and what is accepted.
import { z } from 'zod';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const schema = z.object({
  MASCOT_DB: z.string().min(1).default('data/mascot.db'),
  MASCOT_PERSONAS_DIR: z.string().min(1).optional(),
  MASCOT_PACK: z.string().min(1).default('support'),
  MASCOT_SEED: int(0, 2 ** 31 - 1).default(1),
  MASCOT_PACING_MS: int(0, 60_000).optional(),
  MASCOT_MAX_INPUT_CHARS: int(100, 100_000).default(4000),
  MASCOT_ON_MODEL_FAILURE: z.enum(['skip', 'fallback']).default('skip'),
  MASCOT_LLM_BASE_URL: z.url().optional(),
  MASCOT_LLM_API_KEY: z.string().optional(),
  MASCOT_LLM_MODEL: z.string().min(1).optional(),
  MASCOT_LLM_TIMEOUT_MS: int(100, 600_000).default(30_000),
  MASCOT_LLM_RETRIES: int(0, 10).default(2),
  MASCOT_LLM_CONCURRENCY: int(1, 1024).default(8),
  MASCOT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Persona fidelity (docs/persona-fidelity.md): reward models, best-of-N, health, the judge.
  MASCOT_REWARD_MODELS: z.string().min(1).optional(),
  MASCOT_BEST_OF_N: int(1, 16).default(1),
  MASCOT_BEST_OF_N_BUDGET_MS: int(0, 60_000).default(2500),
  MASCOT_HEALTH_WINDOW: int(4, 500).default(20),
  MASCOT_HEALTH_COLLAPSE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.3),
  MASCOT_HEALTH_FIDELITY_THRESHOLD: z.coerce.number().min(0).max(1).default(0.35),
  MASCOT_JUDGE_BASE_URL: z.url().optional(),
  MASCOT_JUDGE_API_KEY: z.string().optional(),
  MASCOT_JUDGE_MODEL: z.string().min(1).optional(),
  MASCOT_JUDGE_MAX_TOKENS: int(100, 32_000).default(800),
  // Learned director (docs/learning.md): serving, versions, remote inference, the llm director.
  MASCOT_ONNX_EP: z.enum(['cpu', 'cuda']).default('cpu'),
  MASCOT_DIRECTOR_DIR: z.string().min(1).default('data/directors'),
  MASCOT_DIRECTOR_POLL_MS: int(0, 3_600_000).default(2000),
  MASCOT_PROMOTE_MARGIN: z.coerce.number().min(0).max(1).default(0.005),
  MASCOT_KSERVE_URL: z.url().optional(),
  MASCOT_KSERVE_MODEL: z.string().min(1).default('mascot-director-{pack}'),
  MASCOT_KSERVE_TIMEOUT_MS: int(10, 60_000).default(500),
  MASCOT_DIRECTOR_LLM_MODEL: z.string().min(1).optional(),
  MASCOT_DIRECTOR_LLM_TIMEOUT_MS: int(100, 120_000).default(5000),
  // Evaluation and training (src/eval): the group reward's weights, the llm simulated user's model.
  MASCOT_REWARD_WEIGHTS: z.string().min(1).optional(),
  MASCOT_SIM_USER_MODEL: z.string().min(1).optional(),
  // Care and privacy (docs/safety.md): the crisis gate, its optional model check, retention.
  MASCOT_SAFETY_LANGUAGES: z.string().regex(/^[a-z]{2}(\s*,\s*[a-z]{2})*$/, 'must be language codes separated by commas, e.g. "en"').default('en'),
  MASCOT_SAFETY_QUIET_MINUTES: int(0, 24 * 60).default(30),
  MASCOT_SAFETY_MODEL_CHECK: z.enum(['off', 'watch', 'all']).default('off'),
  MASCOT_SAFETY_BASE_URL: z.url().optional(),
  MASCOT_SAFETY_API_KEY: z.string().optional(),
  MASCOT_SAFETY_MODEL: z.string().min(1).optional(),
  MASCOT_SAFETY_TIMEOUT_MS: int(100, 60_000).default(4000),
  MASCOT_SAFETY_ALERT_CHANNEL_DISCORD: z.string().regex(/^\d{5,25}$/, 'must be a Discord channel id (digits)').optional(),
  MASCOT_SAFETY_ALERT_CHANNEL_SLACK: z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'must be a Slack channel id such as C0123ABCD').optional(),
  MASCOT_RETENTION_DAYS: int(1, 36_500).optional(),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Read the MASCOT_* variables; empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = env[key];
    if (v !== undefined && v.trim() !== '') raw[key] = v.trim();
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    // The value is quoted as JSON and shortened: a newline or a huge value must not garble the message.
    const got = (v: string) => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message} (got ${got(raw[String(i.path[0])] ?? '')})`));
  }
  return parsed.data;
}
