// An engine with the real crisis gate in front of its director, for safety and privacy tests.
import { silentLogger } from '../../src/log.ts';
import { CrisisDetector } from '../../src/safety/detector.ts';
import { createSafetyGate, type Gate, type SafetyGateOptions } from '../../src/safety/gate.ts';
import { SafetyStore } from '../../src/safety/store.ts';
import type { EngineOptions } from '../../src/session/engine.ts';
import type { Generator } from '../../src/speaker/generator.ts';
import { makeEngine } from './core.ts';

export function makeGatedEngine(generator: Generator, o: { engine?: Partial<EngineOptions>; gate?: Partial<SafetyGateOptions>; dbFile?: string } = {}) {
  let gate: Gate | undefined;
  const built = makeEngine(generator, { ...o.engine, gate: (e, s, out) => gate!(e, s, out) }, o.dbFile);
  const safety = new SafetyStore(built.db);
  gate = createSafetyGate({
    detector: new CrisisDetector(),
    store: safety,
    packOf: () => built.engine.packs.get('support')!,
    isOptedOut: (p, u) => built.store.isOptedOut(p, u),
    alert: (a) => built.engine.emit('alert', a),
    log: silentLogger(),
    quietMinutes: 30,
    ...o.gate,
  });
  return { ...built, safety };
}
