// The director policies available by name. Channels choose one with /mascot policy.
import type { Policy } from './policy.ts';
import { HeuristicPolicy } from './heuristic.ts';
import { RandomPolicy } from './random.ts';
import { RoundRobinPolicy } from './round-robin.ts';

export function builtinPolicies(): Map<string, Policy> {
  const policies: Policy[] = [new HeuristicPolicy(), new RoundRobinPolicy(), new RandomPolicy()];
  return new Map(policies.map((p) => [p.id, p]));
}
