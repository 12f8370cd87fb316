// The vocabulary of `/mascot`: who is asking and where, what a verb declares, what it answers.
// Platform adapters fill a MascotContext from their interaction and show the MascotResult;
// everything in between is platform-neutral.
import type { PlatformName } from '../core/types.ts';
import type { Persona } from '../persona/schema.ts';
import type { Engine } from '../session/engine.ts';

/** Extra moderators configured by the operator: user ids and (Discord) role ids. */
export interface ModeratorList {
  userIds: readonly string[];
  roleIds: readonly string[];
}

export interface MascotUser {
  id: string;
  name: string;
  /** The platform's own check (Discord: Manage Server in this channel; Slack: workspace admin). */
  isModerator: boolean;
  /** Platform role ids of the user, matched against the configured moderator roles. */
  roleIds?: readonly string[];
}

export interface MascotContext {
  engine: Engine;
  platform: PlatformName;
  /** The conversation the command was used in (a channel, a thread or a DM). */
  channelId: string;
  /** For a thread: its channel, whose settings and persona overrides the thread follows. */
  parentChannelId?: string;
  /** Discord guild or Slack workspace; absent in DMs. */
  spaceId?: string;
  user: MascotUser;
  moderators?: ModeratorList;
  /** Who moderates here, in the platform's own words (refusals and help say it); Discord's wording when absent. */
  moderatorsAre?: string;
  /** Packs this platform offers (a channel may choose only these); all loaded packs when absent. */
  packs?: readonly string[];
  /**
   * How a person types a verb here, for hints in answers (Discord: `/mascot-me optout`,
   * `/mascot persona rollback persona:anchor version:2`); the bare verb and values when absent.
   */
  invocation?: (verbName: string, args: Readonly<Record<string, string | number>>) => string;
  /** How each persona is present on this platform (e.g. "connected as @Anchor", "webhook"). */
  identityOf?: (persona: Persona) => string;
}

export type MascotStatus = 'ok' | 'invalid' | 'refused' | 'error';

export interface MascotResult {
  text: string;
  /** Answers are only shown to the person who asked. */
  ephemeral: true;
  status: MascotStatus;
}

export type ArgValue = string | number | boolean;
export type RawArgs = Readonly<Record<string, ArgValue | undefined>>;

export interface Choice {
  name: string;
  value: string;
}

export interface ArgSpec {
  name: string;
  description: string;
  type: 'string' | 'integer' | 'number';
  required: boolean;
  /** A fixed list of accepted values (shown as choices by platforms that support them). */
  choices?: readonly string[];
  /** Suggestions computed while the person types (persona names, packs, policies). */
  complete?: (ctx: MascotContext, partial: string) => Choice[];
  min?: number;
  max?: number;
  maxLength?: number;
  /** In typed text (Slack), this last argument takes the rest of the line. */
  rest?: boolean;
}

export type Audience = 'moderator' | 'everyone';

export interface MascotVerb {
  /** One or two words, e.g. "personas", "persona set", "channel on". */
  name: string;
  summary: string;
  audience: Audience;
  args: readonly ArgSpec[];
  /** Moderator verbs that change a server's settings refuse to run in DMs. */
  needsServer?: boolean;
  /** Arguments arrive validated against `args` (types, ranges, choices). */
  run(ctx: MascotContext, args: Readonly<Record<string, ArgValue>>): MascotResult | Promise<MascotResult>;
}

export const ok = (text: string): MascotResult => ({ text, ephemeral: true, status: 'ok' });
export const invalid = (text: string): MascotResult => ({ text, ephemeral: true, status: 'invalid' });
export const refused = (text: string): MascotResult => ({ text, ephemeral: true, status: 'refused' });
export const failed = (text: string): MascotResult => ({ text, ephemeral: true, status: 'error' });

/** A wrong argument found while a verb runs: reported to the person as an 'invalid' result. */
export class ArgumentProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArgumentProblem';
  }
}
