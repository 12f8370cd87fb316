// Which personas a message addresses by name: "@guide", "Catalyst, what do you think?".
// Display names are matched with their capital letter as written in the persona file, so the
// ordinary words behind some names ("a guide to", "an anchor") do not summon anyone.
import type { Persona } from './schema.ts';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function namedPersonas(text: string, personas: readonly Persona[]): string[] {
  return personas
    .filter((p) => {
      const handle = new RegExp(`(^|[^\\w@])@(${escapeRe(p.id)}|${escapeRe(p.displayName)})\\b`, 'i');
      const name = new RegExp(`(^|[^\\w])${escapeRe(p.displayName)}\\b`);
      return handle.test(text) || name.test(text);
    })
    .map((p) => p.id);
}
