// The languages crisis detection knows. Adding one: write src/safety/patterns/<code>.ts exporting a
// Language (see ../language.ts and en.ts), add it here, and add labelled sets under datasets/safety/.
import type { Language } from '../language.ts';
import { english } from './en.ts';

export const LANGUAGES: Readonly<Record<string, Language>> = { en: english };

/** The languages named in a comma-separated list; throws naming the unknown ones. */
export function languagesFor(list: string, variable = 'MASCOT_SAFETY_LANGUAGES'): Language[] {
  const codes = [...new Set(list.split(',').map((c) => c.trim().toLowerCase()).filter(Boolean))];
  const unknown = codes.filter((c) => !LANGUAGES[c]);
  if (unknown.length > 0 || codes.length === 0)
    throw new Error(`${variable}: ${unknown.length ? `no crisis patterns for "${unknown.join('", "')}"` : 'no language given'} (available: ${Object.keys(LANGUAGES).join(', ')})`);
  return codes.map((c) => LANGUAGES[c]!);
}
