// What people see when the safety gate responds: one calm message with the server's or pack's
// support resources, and a short alert for moderators with a link to the message (never its text).
import type { ChatEvent } from '../core/types.ts';
import type { CrisisVerdict } from './detector.ts';

const OPENINGS: Record<NonNullable<CrisisVerdict['category']>, string> = {
  suicide: "I'm really glad you said something. What you're carrying sounds very heavy, and you deserve support from a person right now.",
  'self-harm': "Thank you for telling us. You deserve care, not pain, and support from a person right now.",
  'harm-others': 'It sounds like things feel very intense right now. Please put some distance between yourself and anyone who could get hurt, and talk to someone now.',
  abuse: 'What you describe sounds frightening, and it is not your fault. You deserve to be safe.',
  'third-party': 'That sounds really frightening. If someone may be in danger right now, please call your local emergency number for them.',
  unspecified: "I'm really glad you said something. You deserve support from a person right now.",
};

/** The calm message: an opening that fits what was said, the resources, and what happens next. */
export function crisisMessage(category: CrisisVerdict['category'], resources: string): string {
  return [OPENINGS[category ?? 'unspecified'], resources.trim(), 'The companion bots will stay quiet here for a while so people can help.'].join('\n\n');
}

/** A link moderators can open, where the platform has message links. */
export function messageLink(event: ChatEvent): string | undefined {
  if (event.platform === 'discord') return `https://discord.com/channels/${event.spaceId ?? '@me'}/${event.channelId}/${event.messageId}`;
  if (event.platform === 'slack' && /^\d+\.\d+$/.test(event.messageId))
    return `https://slack.com/archives/${event.parentChannelId ?? event.channelId}/p${event.messageId.replace('.', '')}`;
  return undefined;
}

/** The moderators' alert: what kind of crisis, where, a link, and what the companions did. */
export function alertText(event: ChatEvent, verdict: CrisisVerdict, quietUntil: number, responded: boolean, link: string | undefined): string {
  const what = verdict.category === 'unspecified' || !verdict.category ? 'crisis language' : `crisis language (${verdict.category})`;
  const where = link ?? `${event.platform} channel ${event.channelId}, message ${event.messageId}`;
  const until = new Date(quietUntil).toISOString().slice(11, 16);
  const done = responded ? 'A calm message with support resources was posted there' : 'Support resources were already posted there earlier';
  return `Safety alert: ${what} from a member: ${where}\n${done}, and the companions stay quiet in that channel until ${until} UTC. Please check in with the person.`;
}
