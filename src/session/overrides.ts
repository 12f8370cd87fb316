// Personas as moderators have tuned them: the file's values, then overrides for everywhere ('*'),
// then for the server, then for this channel. Applied on every turn, so changes need no restart.
import type { Pack, Persona } from '../persona/schema.ts';
import type { Store } from '../store/store.ts';

/** Fields a moderator may override, with how each value is checked. */
export const OVERRIDABLE = ['talkativeness', 'temperature', 'style', 'strategies', 'enabled'] as const;
export type OverridableField = (typeof OVERRIDABLE)[number];

export function applyOverrides(persona: Persona, overrides: Record<string, unknown>): Persona {
  const p: Persona = { ...persona, generation: { ...persona.generation } };
  for (const [field, value] of Object.entries(overrides)) {
    switch (field) {
      case 'talkativeness':
        if (typeof value === 'number') p.talkativeness = value;
        break;
      case 'temperature':
        if (typeof value === 'number') p.generation.temperature = value;
        break;
      case 'style':
        if (typeof value === 'string' && value.trim()) p.voice = [...persona.voice, value.trim()];
        break;
      case 'strategies':
        if (Array.isArray(value)) p.strategies = persona.strategies.filter((s) => value.includes(s));
        break;
      case 'enabled':
        if (typeof value === 'boolean') p.enabled = value;
        break;
    }
  }
  return p;
}

/** Override scope of one server (Discord guild, Slack workspace): between '*' and a channel. */
export const spaceScopeOf = (platform: string, spaceId: string) => `space:${platform}:${spaceId}`;

/** Overrides of one persona merged from the widest scope to the narrowest ('*', server, channel). */
export function mergedOverrides(store: Store, pack: Pack, personaId: string, scopes: readonly string[]): Record<string, unknown> {
  return Object.assign({}, ...scopes.map((scope) => store.personaOverrides(pack.id, personaId, scope))) as Record<string, unknown>;
}

/** Enabled personas of a pack with global, then server (when given), then channel overrides applied. */
export function effectivePersonas(store: Store, pack: Pack, channelKey: string, spaceScope?: string): Persona[] {
  const scopes = spaceScope ? ['*', spaceScope, channelKey] : ['*', channelKey];
  return pack.personas
    .map((persona) => {
      const overrides = store.safely('overrides', () => mergedOverrides(store, pack, persona.id, scopes));
      return overrides ? applyOverrides(persona, overrides) : persona;
    })
    .filter((p) => p.enabled && p.strategies.length > 0);
}
