// Director policies by name, for the command line (ope, director promote) and evaluation:
//   heuristic | round-robin | random     the built-in policies
//   onnx:<file> (or any path ending .onnx) a director file
//   onnx@<version>                        a registered version
//   active                                what `onnx` serves for the pack now: the promoted version,
//                                         else the built-in models/<pack>-director.onnx, else the heuristic
//   llm                                   the llm director (needs MASCOT_LLM_BASE_URL and a model)
import fs from 'node:fs';
import type { Config } from '../config.ts';
import type { Pack } from '../persona/schema.ts';
import type { Db } from '../store/db.ts';
import { closePolicy, resolvePolicy as resolveEvalPolicy } from '../eval/policies.ts';
import { readDirectorInfo } from '../learn/director-model.ts';
import { HeuristicPolicy } from './heuristic.ts';
import { builtinModelFile } from './learned.ts';
import { policyFromBytes } from './onnx-policy.ts';
import type { Policy } from './policy.ts';
import { DirectorVersions } from './versions.ts';

export interface ResolvedPolicy {
  policy: Policy;
  /** What it is, for reports: "heuristic", "support-v3 (registered)", "models/x.onnx". */
  label: string;
  close(): Promise<void>;
}

export async function resolvePolicy(spec: string, pack: Pack, ctx: { config: Config; db?: Db }): Promise<ResolvedPolicy> {
  if (spec.startsWith('onnx@') || spec === 'active') {
    if (!ctx.db) throw new Error(`"${spec}" needs the database (MASCOT_DB)`);
    const versions = new DirectorVersions(ctx.db, ctx.config.MASCOT_DIRECTOR_DIR);
    const v = spec === 'active' ? versions.active(pack.id) : versions.get(pack.id, spec.slice(5));
    if (!v && spec !== 'active') throw new Error(`no registered director "${spec.slice(5)}" for pack "${pack.id}" (registered: ${versions.list(pack.id).map((x) => x.version).join(', ') || 'none'})`);
    if (v) {
      const bytes = versions.read(v);
      const policy = await policyFromBytes(bytes, readDirectorInfo(bytes, v.file), v.file, pack, { executionProvider: ctx.config.MASCOT_ONNX_EP });
      return { policy, label: `${v.version} (${spec === 'active' ? 'active, ' : ''}registered)`, close: () => policy.close() };
    }
    const shipped = builtinModelFile(pack.id);
    if (!fs.existsSync(shipped)) return { policy: new HeuristicPolicy(), label: 'heuristic (active: no learned director for this pack)', close: async () => {} };
    spec = `onnx:${shipped}`;
  }
  // Built-in names, onnx:<file> and llm: the evaluation's resolver.
  const name = spec.endsWith('.onnx') && !spec.startsWith('onnx:') ? `onnx:${spec}` : spec;
  const policy = await resolveEvalPolicy(name, { pack, config: ctx.config });
  const label = policy.id === 'onnx' ? `${policy.version} (${name.slice(5)})` : policy.id === 'llm' ? `llm (${policy.version})` : spec;
  return { policy, label, close: () => closePolicy(policy) };
}
