// `/mascot health`: the persona health of this conversation (rolling fidelity per persona and the
// collapse signal), for moderators. Registered in the platform-neutral verb table on import.
import { registerVerb } from '../moderation/mascot.ts';
import { ok, type MascotVerb } from '../moderation/verb.ts';
import { conversationKey } from '../moderation/where.ts';
import { formatHealth, healthMonitorOf } from './health.ts';

export const healthVerb: MascotVerb = {
  name: 'health',
  summary: 'persona health here: how well each persona keeps its role, and whether they have started to sound alike',
  audience: 'moderator',
  args: [],
  run(ctx) {
    const monitor = healthMonitorOf(ctx.engine);
    if (!monitor)
      return ok('Persona health is off: no persona reward model is loaded. Train one with `mascot train reward --pack <pack> --out models/persona-reward-<pack>.onnx` and set MASCOT_REWARD_MODELS.');
    return ok(formatHealth(monitor.snapshot(conversationKey(ctx)), monitor.options.collapseThreshold));
  },
};

registerVerb(healthVerb);
