// Verbs for everyone: opt out of (and back into) logging, forget me, feedback on the last round.
import type { MascotVerb } from './verb.ts';
import { invalid, ok } from './verb.ts';
import { cmd, conversationKey } from './where.ts';

const NOTE_MAX = 500;

const optOut: MascotVerb = {
  name: 'optout',
  summary: 'stop storing your messages (the bots still answer you)',
  audience: 'everyone',
  args: [],
  run(ctx) {
    const already = ctx.engine.store.isOptedOut(ctx.platform, ctx.user.id);
    ctx.engine.store.setOptOut(ctx.platform, ctx.user.id, true);
    return ok(
      `${already ? 'You were already opted out.' : 'Done: from now on your messages and feedback are not stored.'} ` +
        `What was stored before stays until you use ${cmd(ctx, 'forgetme')}; ${cmd(ctx, 'optin')} undoes this.`,
    );
  },
};

const optIn: MascotVerb = {
  name: 'optin',
  summary: 'allow storing your messages again (they help the companions improve)',
  audience: 'everyone',
  args: [],
  run(ctx) {
    const was = ctx.engine.store.isOptedOut(ctx.platform, ctx.user.id);
    ctx.engine.store.setOptOut(ctx.platform, ctx.user.id, false);
    return ok(was ? 'Welcome back: your messages are stored again from now on.' : 'You were not opted out; nothing changed.');
  },
};

const forgetMe: MascotVerb = {
  name: 'forgetme',
  summary: 'delete every message and feedback of yours stored here',
  audience: 'everyone',
  args: [],
  run(ctx) {
    const removed = ctx.engine.store.forgetUser(ctx.platform, ctx.user.id);
    const optedOut = ctx.engine.store.isOptedOut(ctx.platform, ctx.user.id);
    return ok(
      `Deleted ${removed.messages} stored message${removed.messages === 1 ? '' : 's'} and ${removed.feedback} feedback entr${removed.feedback === 1 ? 'y' : 'ies'} of yours.` +
        (optedOut ? '' : ` New messages will be stored again; use ${cmd(ctx, 'optout')} to stop that.`),
    );
  },
};

const feedback: MascotVerb = {
  name: 'feedback',
  summary: "rate the bots' last round in this channel from 1 (unhelpful) to 5 (very helpful)",
  audience: 'everyone',
  args: [
    { name: 'rating', description: '1 (unhelpful) to 5 (very helpful)', type: 'integer', required: true, min: 1, max: 5 },
    { name: 'note', description: 'what worked or did not (optional)', type: 'string', required: false, maxLength: NOTE_MAX, rest: true },
  ],
  run(ctx, args) {
    const store = ctx.engine.store;
    if (store.isOptedOut(ctx.platform, ctx.user.id)) return invalid(`You have opted out of logging, so feedback is not stored. Use ${cmd(ctx, 'optin')} first if you want to give it.`);
    const key = conversationKey(ctx);
    const round = store.lastRound(key);
    if (!round) return invalid('There is no bot round in this channel to rate yet.');
    store.addFeedback({
      channelKey: key,
      messageId: round.messageIds.at(-1),
      roundId: round.roundId,
      userId: ctx.user.id,
      kind: 'rating',
      value: Number(args.rating),
      ...(args.note ? { note: String(args.note) } : {}),
      at: Date.now(),
    });
    return ok(`Thank you: your rating ${String(args.rating)}/5 of the last round is stored.`);
  },
};

export const memberVerbs: MascotVerb[] = [optOut, optIn, forgetMe, feedback];
