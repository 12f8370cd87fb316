// The `/mascot` verbs as Discord slash commands, built from the platform-neutral verb table:
// `/mascot` holds the moderator verbs and requires Manage Server through
// default_member_permissions (and is checked again on our side); `/mascot-me` holds what
// everyone may do. Two-word verbs become subcommand groups ("persona set").
import {
  InteractionContextType,
  MessageFlags,
  PermissionFlagsBits,
  SlashCommandBuilder,
  type SlashCommandIntegerOption,
  type SlashCommandNumberOption,
  type SlashCommandSubcommandBuilder,
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { ArgSpec, MascotContext, MascotVerb } from '../../moderation/mascot.ts';
import { completeMascotArg, mascotVerbs, runMascotCommand } from '../../moderation/mascot.ts';
import { splitMessage } from './split.ts';

export const MODERATOR_COMMAND = 'mascot';
export const MEMBER_COMMAND = 'mascot-me';

const DESCRIPTION_MAX = 100;
const short = (text: string) => (text.length <= DESCRIPTION_MAX ? text : `${text.slice(0, DESCRIPTION_MAX - 1)}…`);

function addOption(sub: SlashCommandSubcommandBuilder, spec: ArgSpec): void {
  const description = short(spec.description);
  const numeric = <T extends SlashCommandIntegerOption | SlashCommandNumberOption>(o: T): T => {
    o.setName(spec.name).setDescription(description).setRequired(spec.required);
    if (spec.min !== undefined) o.setMinValue(spec.min);
    if (spec.max !== undefined) o.setMaxValue(spec.max);
    return o;
  };
  if (spec.type === 'integer') {
    sub.addIntegerOption(numeric);
    return;
  }
  if (spec.type === 'number') {
    sub.addNumberOption(numeric);
    return;
  }
  sub.addStringOption((o) => {
    o.setName(spec.name).setDescription(description).setRequired(spec.required);
    if (spec.choices) o.addChoices(...spec.choices.map((c) => ({ name: c, value: c })));
    else if (spec.complete) o.setAutocomplete(true);
    if (spec.maxLength !== undefined) o.setMaxLength(spec.maxLength);
    return o;
  });
}

function subcommand(sub: SlashCommandSubcommandBuilder, name: string, verb: MascotVerb): SlashCommandSubcommandBuilder {
  sub.setName(name).setDescription(short(verb.summary));
  for (const spec of verb.args) addOption(sub, spec);
  return sub;
}

function build(name: string, description: string, verbs: MascotVerb[]): SlashCommandBuilder {
  const command = new SlashCommandBuilder().setName(name).setDescription(description);
  const groups = new Map<string, MascotVerb[]>();
  for (const verb of verbs) {
    const [first, second] = verb.name.split(' ') as [string, string | undefined];
    if (second === undefined) command.addSubcommand((sub) => subcommand(sub, first, verb));
    else groups.set(first, [...(groups.get(first) ?? []), verb]);
  }
  for (const [group, members] of groups)
    command.addSubcommandGroup((g) => {
      g.setName(group).setDescription(short(`${group}: ${members.map((v) => v.name.split(' ')[1]).join(', ')}`));
      for (const verb of members) g.addSubcommand((sub) => subcommand(sub, verb.name.split(' ')[1]!, verb));
      return g;
    });
  return command;
}

/** Both commands as Discord wants them registered (bulk overwrite, so re-registering is harmless). */
export function slashCommands(verbs: Iterable<MascotVerb> = mascotVerbs.values()): RESTPostAPIChatInputApplicationCommandsJSONBody[] {
  const all = [...verbs];
  const help = all.filter((v) => v.name === 'help');
  const moderator = build(MODERATOR_COMMAND, 'Tune the companions in this server (moderators)', [...all.filter((v) => v.audience === 'moderator'), ...help])
    .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
    .setContexts(InteractionContextType.Guild);
  const member = build(MEMBER_COMMAND, 'Your data and feedback for the companions', all.filter((v) => v.audience === 'everyone')).setContexts(
    InteractionContextType.Guild,
    InteractionContextType.BotDM,
  );
  return [moderator.toJSON(), member.toJSON()];
}

/** How a verb is typed on Discord: `/mascot-me optout`, `/mascot persona rollback persona:anchor version:2`. */
export function discordInvocation(verbName: string, args: Readonly<Record<string, string | number>>): string {
  const command = mascotVerbs.get(verbName)?.audience === 'everyone' ? MEMBER_COMMAND : MODERATOR_COMMAND;
  return [`/${command} ${verbName}`, ...Object.entries(args).map(([name, value]) => `${name}:${value}`)].join(' ');
}

/** The verb an interaction names: "persona set" from group "persona" and subcommand "set". */
function verbOf(interaction: ChatInputCommandInteraction | AutocompleteInteraction): string {
  const group = interaction.options.getSubcommandGroup(false);
  const sub = interaction.options.getSubcommand(false) ?? '';
  return group ? `${group} ${sub}` : sub;
}

export type ContextFor = (interaction: ChatInputCommandInteraction | AutocompleteInteraction) => MascotContext;

/** Run a `/mascot` or `/mascot-me` command and answer privately (long answers in follow-ups). */
export async function answerCommand(interaction: ChatInputCommandInteraction, contextFor: ContextFor): Promise<void> {
  const verbName = verbOf(interaction);
  const verb = mascotVerbs.get(verbName);
  const args: Record<string, string | number | boolean> = {};
  for (const spec of verb?.args ?? []) {
    const value = interaction.options.get(spec.name)?.value;
    if (value !== undefined) args[spec.name] = value;
  }
  const result = await runMascotCommand(contextFor(interaction), verbName, args);
  const [first, ...rest] = splitMessage(result.text);
  const flags = MessageFlags.Ephemeral;
  await interaction.reply({ content: first ?? '(no answer)', flags, allowedMentions: { parse: [] } });
  for (const chunk of rest) await interaction.followUp({ content: chunk, flags, allowedMentions: { parse: [] } });
}

/** Suggestions for the option being typed (persona names, packs, policies). */
export async function answerAutocomplete(interaction: AutocompleteInteraction, contextFor: ContextFor): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const choices = completeMascotArg(contextFor(interaction), verbOf(interaction), focused.name, String(focused.value));
  await interaction.respond(choices);
}
