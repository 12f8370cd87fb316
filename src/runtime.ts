// Wires the parts together from configuration: packs, database, generator, policies, engine.
// Every entry point (console, Discord, Slack, evaluation) builds on this.
import type { Config } from './config.ts';
import { attachLearnedDirectors } from './director/learned.ts';
import { builtinPolicies } from './director/registry.ts';
import type { Logger } from './log.ts';
import { loadPacks, PERSONAS_DIR } from './persona/loader.ts';
import type { Pack } from './persona/schema.ts';
import { Engine, type EngineOptions } from './session/engine.ts';
import type { Generator } from './speaker/generator.ts';
import { OfflineGenerator } from './speaker/offline.ts';
import { OpenAIGenerator } from './speaker/openai.ts';
import { setUpFidelity } from './reward/serve.ts';
import { setUpRetention } from './privacy/retention.ts';
import { setUpSafety } from './safety/setup.ts';
import { Speaker, type SpeakerOptions } from './speaker/speaker.ts';
import { openDatabase, type Db } from './store/db.ts';
import { Store } from './store/store.ts';

export interface Runtime {
  config: Config;
  log: Logger;
  packs: Map<string, Pack>;
  db: Db;
  store: Store;
  generator: Generator;
  engine: Engine;
  close(): void;
}

export function createGenerator(config: Config, log: Logger): Generator {
  if (!config.MASCOT_LLM_BASE_URL) return new OfflineGenerator({ seed: config.MASCOT_SEED });
  return new OpenAIGenerator({
    baseURL: config.MASCOT_LLM_BASE_URL,
    apiKey: config.MASCOT_LLM_API_KEY,
    defaultModel: config.MASCOT_LLM_MODEL,
    timeoutMs: config.MASCOT_LLM_TIMEOUT_MS,
    retries: config.MASCOT_LLM_RETRIES,
    concurrency: config.MASCOT_LLM_CONCURRENCY,
    log,
  });
}

export interface RuntimeOverrides {
  engine?: Partial<EngineOptions>;
  speaker?: SpeakerOptions;
  generator?: Generator;
}

/** Build everything; throws a clear error (bad persona file, unwritable database, bad config). */
export function createRuntime(config: Config, log: Logger, overrides: RuntimeOverrides = {}): Runtime {
  const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
  if (!packs.has(config.MASCOT_PACK)) throw new Error(`MASCOT_PACK: pack "${config.MASCOT_PACK}" not found (available: ${[...packs.keys()].join(', ')})`);
  const db = openDatabase(config.MASCOT_DB);
  let warned = false;
  const store = new Store(db, (what, err) => {
    // One line per kind of failure is enough; the reply path goes on.
    if (!warned) log.error({ what, err: (err as Error).message }, 'database write failed; continuing without it');
    warned = true;
  });
  const generator = overrides.generator ?? createGenerator(config, log);
  const fidelity = setUpFidelity(config, log, generator);
  const safety = setUpSafety(config, log, db, store);
  const retention = setUpRetention(config, log, db);
  const engine = new Engine({
    packs,
    defaultPack: config.MASCOT_PACK,
    store,
    speaker: new Speaker(fidelity.generator, { ...fidelity.speakerOptions, ...overrides.speaker }),
    policies: builtinPolicies(),
    log,
    seed: config.MASCOT_SEED,
    pacingMs: config.MASCOT_PACING_MS,
    maxInputChars: config.MASCOT_MAX_INPUT_CHARS,
    onGenerationFailure: config.MASCOT_ON_MODEL_FAILURE,
    gate: safety.gate,
    ...overrides.engine,
  });
  safety.attach(engine);
  fidelity.attach(engine, db);
  const learned = attachLearnedDirectors(config, { db, packs, policies: engine.policies, log });
  log.info({ generator: generator.name, packs: [...packs.keys()], db: config.MASCOT_DB, rewardModels: fidelity.models?.packs ?? [] }, 'runtime ready');
  return {
    config,
    log,
    packs,
    db,
    store,
    generator,
    engine,
    close() {
      engine.cancelAll('shutdown');
      void fidelity.close();
      void learned.stop();
      retention.stop();
      db.close();
    },
  };
}
