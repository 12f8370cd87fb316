// Strategy-only phrasing, for a persona the offline voice has no voice for (a pack someone added)
// or a strategy outside a persona's own bank (a moderator override). Plain and neutral on purpose.
// UNKNOWN_STRATEGY is the honest line for a strategy it has no phrasing for at all.
import type { Recipe } from '../compose.ts';

const one = (...lines: string[]): Recipe => [{ lines }];

export const NEUTRAL: Record<string, Recipe> = {
  reflection: one('[+] That sounds like a good moment.', "It sounds like you're feeling {feelingSaid} right now.", 'I hear {feelingNoun} in what you wrote.', '[!feeling] It sounds like this has been weighing on you.', '[!feeling] That sounds like a lot to hold.'),
  restatement: one('[+] So something went well.', 'So {situation}.', 'If I understand, {situation}, and {situation2}.', '[!situation] So something has been on your mind, and you wanted to say it.', '[!situation] It sounds like a lot is happening at once.'),
  reassurance: one('[+] It is good to hear that.', "What you're feeling makes sense.", "It's understandable to feel {feelingSaid} about this.", "You're not alone in this."),
  question: one('[+] What made that work?', 'What part of this matters most to you?', 'What would help most right now?', "What's been hardest about {topic}?"),
  reframing: one('[+] Could this be a sign of things shifting?', 'Could there be another way to see this?', 'Could this be one difficult part of the story rather than all of it?'),
  affirmation: one('[+] You made that happen.', 'It takes courage to talk about this.', 'You clearly care about getting this right.'),
  encouragement: one('[+] Keep going at your own pace.', 'One small step is enough for now.', 'You can take this one day at a time.'),
  suggestion: one('[+] You could plan to do it again this week.', "One small step could be to write down what's on your mind.", "It might help to tell someone you trust how you're feeling."),
  information: one('[+] Small good moments tend to add up.', 'Many people go through something like this, and it often eases with time and support.'),
  clarify: one('Can you say more about what you mean?', 'What exactly are we deciding?'),
  'invite-input': one('Does anyone see this differently?', "Who hasn't weighed in yet?"),
  challenge: one("What's the main risk here?", 'What could go wrong if we {proposal}?'),
  summarize: one('So far: {proposer} proposes to {proposal}.', 'So far: discussion open, nothing decided.'),
  'record-decision': one('Decided: {decision}.', '[!decision] Nothing has been decided yet.'),
  'action-item': one('Next action: {owner} will {task} {due}.', '[!task] What is the next action, and who owns it?'),
  timekeeping: one("Time check: let's decide what to settle now and what to defer.", "We're short on time; let's wrap this point up."),
};

export const UNKNOWN_STRATEGY: Recipe = one(
  'The offline voice has no phrasing for "{strategy}", so I will only say that I am following along.',
  'I have no offline words prepared for "{strategy}", but I am listening.',
  'There is no offline phrasing for "{strategy}" yet, so I will keep this brief: I am here.',
);
