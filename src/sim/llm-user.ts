// The `llm` simulated user: the person (or, in a meeting, the team) played by a model behind an
// OpenAI-compatible API, with the scenario and the user profile in its instructions. It answers
// each round as JSON, validated like the judge's answers (src/eval/llm-json.ts):
//   {"messages": [{"speaker": "Sam", "text": "..."}], "engagement": 1-5, "end": "no" | "resolved" | "left"}
// It keeps no state of its own: every reply is asked with the conversation so far, so forks are free.
import type OpenAI from 'openai';
import { z } from 'zod';
import { askJson, clientFor, LlmAnswerError, readJsonAnswer, type LlmEndpoint } from '../eval/llm-json.ts';
import { scriptOf, type Scenario, type ScriptLine, type SimScript, type UserProfile } from './scenario.ts';
import type { RoundView, SimulatedUser, UserReply } from './user.ts';

const answerSchema = z.object({
  messages: z
    .array(
      z.object({
        speaker: z.string({ error: (i) => (i.input === undefined ? 'missing' : 'must be a name') }).min(1, 'must not be empty'),
        text: z.string({ error: (i) => (i.input === undefined ? 'missing' : 'must be text') }).trim().min(1, 'must not be empty'),
      }),
      { error: (i) => (i.input === undefined ? 'missing' : 'must be an array of {speaker, text}') },
    )
    .min(1, 'must hold at least one message'),
  engagement: z
    .number({ error: (i) => (i.input === undefined ? 'missing' : `must be a number from 1 to 5 (got ${JSON.stringify(i.input)})`) })
    .min(1, 'must be at least 1')
    .max(5, 'must be at most 5'),
  end: z.enum(['no', 'resolved', 'left'], { error: (i) => (i.input === undefined ? 'missing' : `must be "no", "resolved" or "left" (got ${JSON.stringify(i.input)})`) }),
});

export class LlmUser implements SimulatedUser {
  readonly kind = 'llm';
  readonly script: SimScript;
  private readonly client: OpenAI;

  constructor(
    readonly scenario: Scenario,
    readonly profile: UserProfile,
    private readonly endpoint: LlmEndpoint,
    client?: OpenAI,
  ) {
    this.script = scriptOf(scenario);
    this.client = client ?? clientFor(endpoint);
  }

  opening(): ScriptLine {
    return this.script.opening;
  }

  needs(): undefined {
    return undefined;
  }

  fork(): LlmUser {
    return new LlmUser(this.scenario, this.profile, this.endpoint, this.client);
  }

  async respond(round: RoundView): Promise<UserReply> {
    const answer = await askJson(this.client, this.endpoint, this.messages(round), (content, finish) => this.parse(content, finish), { temperature: 0.7 });
    return answer;
  }

  /** Parse one answer; speakers must be the person (or the meeting's participants). */
  parse(content: string | null | undefined, finishReason?: string | null): UserReply {
    const answer = readJsonAnswer('simulated user answer', content, answerSchema, finishReason);
    const speakers = this.speakers();
    const lines = answer.messages.map((m, i) => {
      const speaker = speakers.find((s) => s.name.toLowerCase() === m.speaker.trim().toLowerCase());
      if (!speaker) throw new LlmAnswerError('simulated user answer', `messages.${i}.speaker`, `"${m.speaker}" is not one of ${speakers.map((s) => s.name).join(', ')}`, content ?? '');
      return { speaker, text: m.text };
    });
    return { lines, engagement: (answer.engagement - 1) / 4, ...(answer.end === 'no' ? {} : { end: answer.end }) };
  }

  private speakers(): { id: string; name: string }[] {
    const s = this.script;
    const all = [s.lead, ...Object.values(s.lines).flat().map((l) => l.speaker)];
    return all.filter((p, i) => all.findIndex((q) => q.id === p.id) === i);
  }

  messages(round: RoundView): OpenAI.ChatCompletionMessageParam[] {
    const sc = this.scenario;
    const p = this.profile;
    const who =
      sc.kind === 'support'
        ? [
            `You are ${this.script.lead.name}, a person (not an AI) talking in a chat with a small group of AI companions (${round.pack.name}).`,
            `Your situation: ${sc.situation}`,
            `What you need from this conversation: ${sc.need}`,
            `Things you may go on to share when you feel heard: ${sc.shares.join(' ')}`,
            `Things you might come to realise if helped to think: ${sc.realisations.join(' ')}`,
            `Steps you might consider once ready: ${sc.steps.join('; ')}.`,
            `If they rush you toward solutions before you feel heard, you say something like: "${sc.whenRushed}"`,
          ]
        : [
            `You play the human participants of a team meeting thread in which AI companions (${round.pack.name}) help run the meeting.`,
            `Agenda: ${sc.agenda}`,
            'Participants (the first chairs):',
            ...sc.participants.map((x) => `- ${x.name}: position "${x.position}"; concern "${x.concern}"`),
            `A good meeting would decide: ${sc.decisions.join(' ')} Action items: ${sc.actionItems.map((a) => `${a.owner} will ${a.task} by ${a.due}`).join('; ')}.`,
            `If the companions push for decisions before positions are heard, the chair says something like: "${sc.whenRushed}"`,
          ];
    const system = [
      ...who,
      '',
      `How you talk: ${p.label}. ${p.description} Write ${p.verbosity === 1 ? 'one short sentence' : `up to ${p.verbosity} sentences`} per message when at ease, less when annoyed.`,
      `You welcome at most ${p.turnTolerance} companion message(s) after each of yours; more feels like a lecture. Repetition and generic advice annoy you.`,
      'Reply to the latest companion messages as this person would, in plain chat language. Never mention being simulated.',
      'Answer with JSON only, exactly this shape:',
      `{"messages": [{"speaker": "${this.script.lead.name}", "text": "..."}], "engagement": 1-5 (how engaged you feel now), "end": "no" | "resolved" (your need is met and you say goodbye) | "left" (you give up on the conversation)}`,
    ].join('\n');
    const transcript = round.history.map((t) => `${t.author.name}${t.author.isBot ? ' (companion)' : ''}: ${t.text.replace(/\s+/g, ' ').trim()}`).join('\n');
    return [
      { role: 'system', content: system },
      { role: 'user', content: `The conversation so far:\n<conversation>\n${transcript}\n</conversation>\nYour next message(s), as JSON.` },
    ];
  }
}
