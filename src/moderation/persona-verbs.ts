// Moderator verbs on personas: list with status, show one, set a field, reset, history, roll back.
// Overrides live in the store per scope (this channel, or the whole server) with an audit row
// for every change; the engine reads them on every turn, so changes apply without restart.
import type { Pack, Persona } from '../persona/schema.ts';
import { OVERRIDABLE, applyOverrides, type OverridableField } from '../session/overrides.ts';
import type { AuditEntry } from '../store/store.ts';
import type { ArgSpec, MascotContext, MascotVerb } from './verb.ts';
import { ArgumentProblem, invalid, ok } from './verb.ts';
import { SCOPES, actorOf, channelPack, cmd, findPersona, formatWhen, personaChoices, scopesHere, storeScope, type ScopeName } from './where.ts';

const HISTORY_SHOWN = 15;
const STYLE_MAX = 300;

const personaArg: ArgSpec = { name: 'persona', description: 'persona id or name', type: 'string', required: true, complete: personaChoices };
const scopeArg: ArgSpec = {
  name: 'scope',
  description: 'this channel (default) or the whole server',
  type: 'string',
  required: false,
  choices: SCOPES,
};
/** The scope argument of a hint: only when it is not the default. */
const serverScope = (scope: ScopeName): { scope?: string } => (scope === 'server' ? { scope } : {});
const fieldArg = (required: boolean): ArgSpec => ({ name: 'field', description: 'what to change', type: 'string', required, choices: OVERRIDABLE });

/** Read a typed value for a field; the error says what the field accepts. */
export function parseFieldValue(persona: Persona, field: OverridableField, text: string): unknown {
  const t = text.trim();
  const bad = (what: string) => new ArgumentProblem(`${field} "${t}" is not accepted: expected ${what}.`);
  switch (field) {
    case 'talkativeness':
    case 'temperature': {
      const max = field === 'talkativeness' ? 1 : 2;
      const n = t === '' ? NaN : Number(t);
      if (!Number.isFinite(n) || n < 0 || n > max) throw bad(`a number from 0 to ${max}`);
      return n;
    }
    case 'style':
      if (t.length === 0 || t.length > STYLE_MAX) throw bad(`a style note of 1 to ${STYLE_MAX} characters (added to the persona's voice rules)`);
      return t;
    case 'strategies': {
      const wanted = [...new Set(t.split(/[\s,]+/).filter(Boolean).map((s) => s.toLowerCase()))];
      const unknown = wanted.filter((s) => !persona.strategies.includes(s));
      if (wanted.length === 0 || unknown.length > 0)
        throw bad(`one or more of ${persona.displayName}'s strategies, separated by commas: ${persona.strategies.join(', ')}`);
      return persona.strategies.filter((s) => wanted.includes(s));
    }
    case 'enabled': {
      const v = t.toLowerCase();
      if (['true', 'yes', 'on', 'enabled', '1'].includes(v)) return true;
      if (['false', 'no', 'off', 'disabled', '0'].includes(v)) return false;
      throw bad('on or off (true/false, yes/no)');
    }
  }
}

export function formatValue(value: unknown): string {
  if (value === undefined) return 'the file value';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return String(value);
}

/** A persona field as it is in the file. */
function fileValue(persona: Persona, field: OverridableField): unknown {
  switch (field) {
    case 'talkativeness':
      return persona.talkativeness;
    case 'temperature':
      return persona.generation.temperature;
    case 'style':
      return undefined;
    case 'strategies':
      return persona.strategies;
    case 'enabled':
      return persona.enabled;
  }
}

interface FieldState {
  field: OverridableField;
  value: unknown;
  /** Where the effective value comes from. */
  source: 'file' | 'everywhere' | 'server' | 'channel';
}

/** Each field of a persona here: its effective value and which scope set it. */
function fieldStates(ctx: MascotContext, pack: Pack, persona: Persona): FieldState[] {
  const scopes = scopesHere(ctx);
  const names: FieldState['source'][] = scopes.length === 3 ? ['everywhere', 'server', 'channel'] : ['everywhere', 'channel'];
  const overrides = scopes.map((scope) => ctx.engine.store.personaOverrides(pack.id, persona.id, scope));
  return OVERRIDABLE.map((field) => {
    let state: FieldState = { field, value: fileValue(persona, field), source: 'file' };
    overrides.forEach((o, i) => {
      if (field in o) state = { field, value: o[field], source: names[i]! };
    });
    return state;
  });
}

function statusLine(ctx: MascotContext, pack: Pack, persona: Persona): string {
  const states = fieldStates(ctx, pack, persona);
  const now = applyOverrides(persona, Object.fromEntries(states.filter((s) => s.source !== 'file').map((s) => [s.field, s.value])));
  const tuned = states.filter((s) => s.source !== 'file').map((s) => s.field);
  const parts = [
    now.enabled ? 'on' : 'off',
    `talkativeness ${now.talkativeness}`,
    `temperature ${now.generation.temperature}`,
    `${now.strategies.length}/${persona.strategies.length} strategies`,
  ];
  if (ctx.identityOf) parts.push(ctx.identityOf(persona));
  const mark = tuned.length > 0 ? ` · tuned: ${tuned.join(', ')}` : '';
  return `• **${persona.displayName}** (\`${persona.id}\`), ${persona.role}: ${parts.join(' · ')}${mark}`;
}

const listPersonas: MascotVerb = {
  name: 'personas',
  summary: 'list the personas of this channel with their status',
  audience: 'moderator',
  args: [],
  run(ctx) {
    const pack = channelPack(ctx);
    return ok([`Personas of the **${pack.name}** pack here:`, ...pack.personas.map((p) => statusLine(ctx, pack, p))].join('\n'));
  },
};

const showPersona: MascotVerb = {
  name: 'persona show',
  summary: 'show one persona: every tunable value and where it comes from',
  audience: 'moderator',
  args: [personaArg],
  run(ctx, args) {
    const pack = channelPack(ctx);
    const persona = findPersona(pack, String(args.persona));
    const lines = [`**${persona.displayName}** (\`${persona.id}\`), ${persona.role}, in the ${pack.name} pack`];
    if (ctx.identityOf) lines.push(`Identity: ${ctx.identityOf(persona)}`);
    for (const s of fieldStates(ctx, pack, persona)) {
      const from = s.source === 'file' ? 'from the file' : `set for ${s.source === 'everywhere' ? 'every server' : `this ${s.source}`}; file: ${formatValue(fileValue(persona, s.field))}`;
      lines.push(`${s.field}: ${s.field === 'style' && s.value === undefined ? 'no extra note' : formatValue(s.value)} (${from})`);
    }
    lines.push(`All strategies in the file: ${persona.strategies.join(', ')}`);
    return ok(lines.join('\n'));
  },
};

const setPersona: MascotVerb = {
  name: 'persona set',
  summary: 'change talkativeness, temperature, a style note, allowed strategies, or on/off',
  audience: 'moderator',
  needsServer: true,
  args: [
    personaArg,
    fieldArg(true),
    { name: 'value', description: 'the new value', type: 'string', required: true, maxLength: STYLE_MAX, rest: true },
    scopeArg,
  ],
  run(ctx, args) {
    const pack = channelPack(ctx);
    const persona = findPersona(pack, String(args.persona));
    const field = args.field as OverridableField;
    const value = parseFieldValue(persona, field, String(args.value));
    const scopeName = (args.scope ?? 'channel') as ScopeName;
    const scope = storeScope(ctx, scopeName);
    const old = ctx.engine.store.personaOverrides(pack.id, persona.id, scope)[field];
    if (JSON.stringify(old) === JSON.stringify(value)) return ok(`${persona.displayName}'s ${field} is already ${formatValue(value)} in this ${scopeName}; nothing changed.`);
    ctx.engine.store.setPersonaOverride(pack.id, persona.id, scope, field, value, actorOf(ctx));
    const version = ctx.engine.store.historySize(ctx.engine.store.personaTarget(pack.id, persona.id, scope));
    return ok(
      `${persona.displayName}'s ${field} is now ${formatValue(value)} in this ${scopeName} (was ${formatValue(old ?? fileValue(persona, field))}). ` +
        `It applies from the next turn. Version ${version}; undo with ${cmd(ctx, 'persona rollback', { persona: persona.id, version: version - 1, ...serverScope(scopeName) })}.`,
    );
  },
};

const resetPersona: MascotVerb = {
  name: 'persona reset',
  summary: "return a persona (or one field) to the file's values",
  audience: 'moderator',
  needsServer: true,
  args: [personaArg, fieldArg(false), scopeArg],
  run(ctx, args) {
    const pack = channelPack(ctx);
    const persona = findPersona(pack, String(args.persona));
    const scopeName = (args.scope ?? 'channel') as ScopeName;
    const scope = storeScope(ctx, scopeName);
    const current = ctx.engine.store.personaOverrides(pack.id, persona.id, scope);
    const fields = (args.field ? [String(args.field)] : Object.keys(current)).filter((f) => f in current);
    if (fields.length === 0) return ok(`${persona.displayName} has no ${args.field ? `${String(args.field)} ` : ''}changes in this ${scopeName}; nothing to reset.`);
    const actor = actorOf(ctx);
    ctx.engine.store.db.transaction(() => {
      for (const f of fields) ctx.engine.store.setPersonaOverride(pack.id, persona.id, scope, f, undefined, actor, 'reset');
    })();
    return ok(`${persona.displayName}'s ${fields.join(', ')} ${fields.length === 1 ? 'is' : 'are'} back to the file's values in this ${scopeName}, from the next turn.`);
  },
};

function describeEntry(e: AuditEntry): string {
  return `v${e.version} · ${formatWhen(e.at)} · ${e.actor}: ${e.field} ${formatValue(e.oldValue)} → ${formatValue(e.newValue)}${e.action === 'set' ? '' : ` (${e.action})`}`;
}

const personaHistory: MascotVerb = {
  name: 'persona history',
  summary: 'who changed a persona, when, from what to what',
  audience: 'moderator',
  needsServer: true,
  args: [personaArg, scopeArg],
  run(ctx, args) {
    const pack = channelPack(ctx);
    const persona = findPersona(pack, String(args.persona));
    const scopeName = (args.scope ?? 'channel') as ScopeName;
    const target = ctx.engine.store.personaTarget(pack.id, persona.id, storeScope(ctx, scopeName));
    const shown = ctx.engine.store.history(target, HISTORY_SHOWN);
    if (shown.length === 0) return ok(`${persona.displayName} has not been changed in this ${scopeName} (version 0: the file's values).`);
    const lines = [`Changes to ${persona.displayName} in this ${scopeName} (version 0 is the file's values):`];
    if (shown[0]!.version > 1) lines.push(`(${shown[0]!.version - 1} older changes not shown)`);
    lines.push(...shown.map(describeEntry));
    lines.push(`Roll back with ${cmd(ctx, 'persona rollback', { persona: persona.id, version: '<version>', ...serverScope(scopeName) })}.`);
    return ok(lines.join('\n'));
  },
};

const rollbackPersona: MascotVerb = {
  name: 'persona rollback',
  summary: 'return a persona to how it was at a version of its history',
  audience: 'moderator',
  needsServer: true,
  args: [personaArg, { name: 'version', description: 'version from the history (0: the file values)', type: 'integer', required: true, min: 0 }, scopeArg],
  run(ctx, args) {
    const pack = channelPack(ctx);
    const persona = findPersona(pack, String(args.persona));
    const scopeName = (args.scope ?? 'channel') as ScopeName;
    const scope = storeScope(ctx, scopeName);
    const version = Number(args.version);
    const latest = ctx.engine.store.historySize(ctx.engine.store.personaTarget(pack.id, persona.id, scope));
    if (version > latest) return invalid(`version ${version} does not exist: ${persona.displayName} has versions 0 to ${latest} in this ${scopeName}.`);
    ctx.engine.store.rollbackPersona(pack.id, persona.id, scope, version, actorOf(ctx));
    const now = ctx.engine.store.personaOverrides(pack.id, persona.id, scope);
    const summary = Object.keys(now).length === 0 ? "the file's values" : Object.entries(now).map(([f, v]) => `${f} ${formatValue(v)}`).join(', ');
    return ok(`${persona.displayName} is back to version ${version} in this ${scopeName}: ${summary}. It applies from the next turn.`);
  },
};

export const personaVerbs: MascotVerb[] = [listPersonas, showPersona, setPersona, resetPersona, personaHistory, rollbackPersona];
