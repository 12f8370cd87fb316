// Builds the safety gate from configuration for the runtime: the crisis rules for the configured
// languages, the optional model-backed check, the event store, and the moderator alert path
// (the engine's 'alert' event).
import type { Config } from '../config.ts';
import type { ChatEvent } from '../core/types.ts';
import type { Logger } from '../log.ts';
import { channelKeyOf, type Engine } from '../session/engine.ts';
import type { Db } from '../store/db.ts';
import type { Store } from '../store/store.ts';
import { CrisisRules } from './classifier.ts';
import { CrisisDetector } from './detector.ts';
import { createSafetyGate, type Gate } from './gate.ts';
import { DEFAULT_LEXICAL_MODEL, LexicalClassifier } from './lexical.ts';
import { ModelSafetyCheck } from './model-check.ts';
import { languagesFor } from './patterns/index.ts';
import { SafetyStore } from './store.ts';

/** The detector the configuration asks for; throws naming the variable when it cannot be built. */
export function detectorFromConfig(config: Config, log: Logger): CrisisDetector {
  const rules = new CrisisRules(languagesFor(config.MASCOT_SAFETY_LANGUAGES));
  // The learned classifier is trained on English; other languages rely on their rules.
  const lexical = rules.languages.some((l) => l.code === 'en') ? LexicalClassifier.load(DEFAULT_LEXICAL_MODEL) : undefined;
  if (config.MASCOT_SAFETY_MODEL_CHECK === 'off') return new CrisisDetector({ rules, ...(lexical ? { lexical } : {}) });
  const baseURL = config.MASCOT_SAFETY_BASE_URL ?? config.MASCOT_LLM_BASE_URL;
  const model = config.MASCOT_SAFETY_MODEL ?? config.MASCOT_LLM_MODEL;
  if (!baseURL) throw new Error(`MASCOT_SAFETY_MODEL_CHECK=${config.MASCOT_SAFETY_MODEL_CHECK} needs MASCOT_SAFETY_BASE_URL or MASCOT_LLM_BASE_URL`);
  if (!model) throw new Error(`MASCOT_SAFETY_MODEL_CHECK=${config.MASCOT_SAFETY_MODEL_CHECK} needs MASCOT_SAFETY_MODEL or MASCOT_LLM_MODEL`);
  let lastWarned = 0;
  return new CrisisDetector({
    rules,
    ...(lexical ? { lexical } : {}),
    mode: config.MASCOT_SAFETY_MODEL_CHECK,
    model: new ModelSafetyCheck({ baseURL, apiKey: config.MASCOT_SAFETY_API_KEY ?? config.MASCOT_LLM_API_KEY, model, timeoutMs: config.MASCOT_SAFETY_TIMEOUT_MS }),
    onModelProblem: (problem) => {
      // One line every five minutes: a down endpoint must not flood the log.
      if (Date.now() - lastWarned < 5 * 60_000) return;
      lastWarned = Date.now();
      log.warn({ problem }, 'safety model check unavailable; the crisis rules decide alone');
    },
  });
}

export interface Safety {
  gate: Gate;
  /** Give the gate its engine (pack lookup, alerts); call once the engine exists. */
  attach(engine: Engine): void;
}

export function setUpSafety(config: Config, log: Logger, db: Db, store: Store): Safety {
  let engine: Engine | undefined;
  const settingsKeyOf = (e: ChatEvent) => channelKeyOf(e.platform, e.parentChannelId ?? e.channelId);
  const gate = createSafetyGate({
    detector: detectorFromConfig(config, log),
    store: new SafetyStore(db),
    packOf: (e) => {
      const packs = engine!.packs;
      return packs.get(engine!.channelConfig(settingsKeyOf(e)).pack) ?? packs.get(config.MASCOT_PACK)!;
    },
    isOptedOut: (platform, userId) => store.isOptedOut(platform, userId),
    alert: (alert) => engine?.emit('alert', alert),
    log: log.child({ component: 'safety' }),
    quietMinutes: config.MASCOT_SAFETY_QUIET_MINUTES,
    alertChannels: { discord: config.MASCOT_SAFETY_ALERT_CHANNEL_DISCORD, slack: config.MASCOT_SAFETY_ALERT_CHANNEL_SLACK },
  });
  return {
    gate,
    attach(e) {
      engine = e;
    },
  };
}
