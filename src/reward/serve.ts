// Persona fidelity in the running process, from configuration: the reward models
// (MASCOT_REWARD_MODELS, default the shipped models/persona-reward-*.onnx; "off" disables),
// best-of-N for every speaker (MASCOT_BEST_OF_N, MASCOT_BEST_OF_N_BUDGET_MS) and the persona
// health monitor, whose alerts become the engine's moderator `alert` events.
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Engine } from '../session/engine.ts';
import type { Generator } from '../speaker/generator.ts';
import type { SpeakerOptions } from '../speaker/speaker.ts';
import type { Db } from '../store/db.ts';
import { BudgetedGenerator, RewardModels, shippedRewardModels } from './best-of-n.ts';
import { HealthMonitor } from './health.ts';
import './health-verb.ts';
import { FidelityStore } from './store.ts';

export interface FidelityServing {
  models: RewardModels | undefined;
  /** The generator to give the speaker (budgeted when best-of-N is on). */
  generator: Generator;
  speakerOptions: SpeakerOptions;
  /** Start persona health on an engine (a no-op without models). */
  attach(engine: Engine, db: Db): HealthMonitor | undefined;
  close(): Promise<void>;
}

export function rewardModelFiles(config: Pick<Config, 'MASCOT_REWARD_MODELS'>): string[] {
  const raw = config.MASCOT_REWARD_MODELS?.trim();
  if (raw === 'off') return [];
  if (!raw) return shippedRewardModels();
  return raw.split(',').map((f) => f.trim()).filter(Boolean);
}

export function setUpFidelity(config: Config, log: Logger, generator: Generator): FidelityServing {
  const files = rewardModelFiles(config);
  const models = files.length > 0 ? new RewardModels(files, { log }) : undefined;
  const bestOfN = models && config.MASCOT_BEST_OF_N > 1;
  let monitor: HealthMonitor | undefined;
  if (config.MASCOT_BEST_OF_N > 1 && !models) log.warn('MASCOT_BEST_OF_N is set but no persona reward model is loaded (MASCOT_REWARD_MODELS); best-of-N is off');
  return {
    models,
    generator: bestOfN ? new BudgetedGenerator(generator, config.MASCOT_BEST_OF_N_BUDGET_MS, log) : generator,
    speakerOptions: bestOfN ? { candidates: config.MASCOT_BEST_OF_N, ranker: models.ranker() } : {},
    attach(engine, db) {
      if (!models) return undefined;
      monitor = new HealthMonitor(
        new FidelityStore(db),
        models.forPack,
        { window: config.MASCOT_HEALTH_WINDOW, collapseThreshold: config.MASCOT_HEALTH_COLLAPSE_THRESHOLD, fidelityThreshold: config.MASCOT_HEALTH_FIDELITY_THRESHOLD },
        log,
      );
      monitor.attach(engine);
      return monitor;
    },
    close: async () => {
      monitor?.stop();
      await models?.close();
    },
  };
}
