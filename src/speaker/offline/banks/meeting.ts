// Phrase banks of the meeting crew: the facilitator inclusive and neutral, the skeptic direct
// about one risk at a time, the scribe terse and structured, the planner owner-and-date minded.
// Slots: {humanName} {name} {proposal} {proposer} {decision} {decider} {task} {owner} {due} {date} {question}.
import type { Recipe } from '../compose.ts';

const facilitator: Record<string, Recipe> = {
  'invite-input': [
    { chance: 0.3, lines: ['Thanks, {humanName}.', 'Good point to pause on.', "Let's widen the circle for a second."] },
    {
      lines: [
        "Before we agree to {proposal}, I'd like to hear from anyone who hasn't weighed in yet: what would it mean for your side?",
        "{name}, we haven't heard your take yet: how does the plan to {proposal} look from where you sit?",
        "We've heard from {humanName}; who sees this differently?",
        "Let's hear from someone who hasn't spoken yet: what's missing from this picture?",
        "Who's closest to the work here, and what would they flag about it?",
        'What would make the quieter voices here comfortable with the plan to {proposal}?',
        "{name}, what's your read on this?",
        'Before we lock in "{decision}", does anyone see it differently?',
        'Which team would feel this first, and have we heard from them?',
        '[t:launch] Has anyone from support or QA weighed in on the launch timing yet?',
        '[t:cost|vendor] Who here holds the budget view, and what does it say?',
        "Is there a view we haven't heard yet, even a half-formed one?",
        'Who would disagree with this, and what would they say?',
        'Does anyone have data that points the other way?',
      ],
    },
  ],
  clarify: [
    {
      lines: [
        "To make this concrete: what's the first step if we decide to {proposal}?",
        'What problem are we solving by choosing to {proposal}?',
        'What does done look like for the plan to {proposal}?',
        'Which part of this are we actually deciding today?',
        "What's the one question we need answered before we can decide?",
        'When we say "{decision}", what exactly changes for the team?',
        '{name}, can you say a bit more about what you have in mind?',
        "Is this a decision for today, or a direction we're exploring?",
        'Which option are we comparing this against?',
        'What would we need to see to feel confident about this?',
        'Who is this decision for, and what do they need from it?',
        "What's the smallest version of this we could agree on today?",
        'Are we solving for speed, cost or quality here?',
        'What would change our minds on this?',
        '{name}, what would you need to know before deciding?',
      ],
    },
  ],
  timekeeping: [
    {
      lines: [
        "Quick time check: we've been on this a while, so let's aim to close it in the next few minutes.",
        "We've got limited time, so let's settle whether to {proposal} now and park the rest for a follow-up.",
        "Let's timebox this to five more minutes, then decide or defer.",
        '[t:time] There are a few threads open; I suggest we finish the current one before taking the next.',
        "To protect the time, let's capture the open points and move on.",
        "[t:time] Since time is short, let's decide what has to be settled today and what can wait.",
        '{name}, can we take your point as the last one on this before we move on?',
        "We're close to time; let's make sure every open point has an owner before we stop.",
        "Let's spend the remaining minutes on what needs a decision today.",
        "Anything not decided today goes to the next sync, so let's pick what must close now.",
        "We have a few minutes left, so let's finish this point and save the rest for next time.",
      ],
    },
    { chance: 0.5, lines: ['Does that work for everyone?', 'Any objection to parking the rest?', "Shout if something can't wait."] },
  ],
};

const skeptic: Record<string, Recipe> = {
  challenge: [
    {
      lines: [
        "The risk with deciding to {proposal} is that we find the hidden costs only after we've committed.",
        "Before we {proposal}, what's our fallback if it doesn't work?",
        'If we {proposal}, what do we stop doing to make room for it?',
        'My concern with "{decision}" is that we haven\'t said what would make us reverse it.',
        'What\'s the cost if "{decision}" turns out to be wrong, and who carries it?',
        'Is {date} a real constraint, or a date we picked?',
        '[t:launch] Shipping to everyone at once means any regression hits every customer on day one.',
        '[t:vendor] Switching vendors is rarely just the price; migration and lock-in can eat the savings.',
        '[t:cost] Cheaper up front can cost more later if it adds maintenance, and nobody has priced the full year yet.',
        '[t:hiring] Hiring takes months to pay off, so the real question is what slips in the meantime.',
        "The biggest risk I see is that we're agreeing faster than we're checking the numbers.",
        'What would have to be true for this to work, and have we checked it?',
        "The trade-off nobody has named yet is what this costs in time we'd otherwise spend elsewhere.",
        "I'd test the assumption that nothing else slips while we do this.",
        'The decision looks cheap now, but reversing it later may not be.',
        'We may be solving the symptom rather than the cause.',
        "The risk I'd flag is depending on one person for this; if they're out, it stalls.",
      ],
    },
    {
      chance: 0.5,
      lines: [
        'A small pilot first would tell us most of this with far less exposure.',
        'Writing down what would make us reverse it, before we start, would cover it for me.',
        'Naming an owner for that risk would be enough for me.',
        "If we can answer that, I'm on board.",
        "[t:launch] A staged rollout would limit the damage if I'm right.",
      ],
    },
  ],
  clarify: [
    {
      lines: [
        'How will we know in a month whether it worked?',
        'Measured how, and against what baseline?',
        'Who exactly is affected if we {proposal}?',
        'What does success look like in numbers if we {proposal}?',
        "What's the evidence that this is the problem worth solving first?",
        "[t:cost] What's the full cost over a year, not just up front?",
        "[t:launch] What's our rollback plan if the launch goes wrong?",
        'Which assumption here are we least sure of?',
        "What's the worst realistic outcome, and could we live with it?",
        'Who has tried this before, and what did they learn?',
        "What are we assuming about the timeline that we haven't checked?",
        'What would we do if the numbers came back the other way?',
        'How reversible is this if it goes badly?',
        'Is {date} a real constraint, or a date we picked?',
      ],
    },
  ],
};

const scribe: Record<string, Recipe> = {
  summarize: [
    {
      lines: [
        'Summary: {proposer} proposes to {proposal}.',
        'Summary: the thread is weighing whether to {proposal}.',
        'Summary: agreed to {decision}.',
        'Summary: {owner} will {task} {due}.',
        '[!due] Summary: {owner} will {task}.',
        'Summary: one proposal on the table, to {proposal}, with no decision yet.',
        '[!decision !proposal] Summary: discussion is open and no decision has been recorded yet.',
        '[!proposal !decision !task] Summary so far: {humanName} has raised a point; no decision yet.',
        '[!proposal !decision] Summary: {humanName} asked, "{question}"',
        '[?decision] Summary: one decision recorded so far; discussion continues.',
        '[?decision] Summary: the thread has moved from options to a decision.',
        '[!decision] Summary: still exploring options; nothing settled yet.',
        '[!decision] Summary: several views shared, no agreement yet.',
      ],
    },
    {
      chance: 0.6,
      lines: [
        'Open: whether to {proposal}.',
        '[!owner] Open: who will {task}, and by when.',
        '[!due] Open: when {owner} will {task}.',
        '[!decision] Open: nothing recorded as decided yet.',
        '[!owner !task] Open: no owner named yet.',
      ],
    },
  ],
  'record-decision': [
    {
      lines: [
        'Decision: {decision}.',
        'Decision recorded: {decision}.',
        'Logged as decided: {decision}.',
        'Decision: {decision}, as stated by {decider}.',
        '[!decision] Open decision: whether to {proposal}.',
        '[!decision] No decision recorded yet; open: whether to {proposal}.',
        '[!decision] Pending decision: whether to {proposal}.',
        '[!decision !proposal] No decision recorded yet.',
        '[!decision !proposal] Nothing decided yet in this thread.',
        '[!decision !proposal] Decision still open; no proposal recorded.',
        '[?decision] Nothing new decided on this point yet.',
        '[?decision] On this point, no decision yet.',
      ],
    },
    {
      chance: 0.5,
      lines: ['Correct me if the wording is off.', "Flag it if that isn't what we agreed.", 'Is that the wording we want?', 'Let me know if I missed a condition.', "Edits welcome if I've misstated it."],
    },
  ],
};

const planner: Record<string, Recipe> = {
  'action-item': [
    {
      lines: [
        'Action: {owner} will {task} {due}.',
        'Action item: {owner} to {task}, {due}.',
        'Action: {owner} owns "{task}", due {date}.',
        '{owner}, is {date} realistic for that, or should we move it?',
        "Logged for {owner}, due {date}; shout if that changes.",
        '[!due] Action: {owner} will {task}; what date should we put on it?',
        '[!due] {owner}, when can you have that done?',
        '[!due] Action: {owner} to {task}, date to be confirmed.',
        '[!owner] Action: {task}; who owns it, and by when?',
        '[!owner] Action: {task} {due}, owner still needed.',
        '[!owner] Before this slips: who will {task}?',
        '[!task] If we go ahead and {proposal}, who owns the first step, and by when?',
        '[!task] Action needed for "{decision}": who owns the follow-up, and by when?',
        "[!task] Before we move on, what's the one action item from this, and who owns it?",
        "[!task] Who's taking the next step here, and by when?",
        '[!task !proposal] Action items so far: none, so who wants to take the first one?',
        "[!task] Let's not leave without one owner and one date.",
        "[!task] What's the first concrete step, and who's taking it?",
      ],
    },
    { chance: 0.4, lines: ["Shout if that date doesn't work.", 'Added to the action list.', "I'll keep it on the list until it's done."] },
  ],
  'record-decision': [
    {
      lines: [
        'Decision: {decision}; next I need an owner for the follow-up.',
        'Decided: {decision}, so the next question is who does what by when.',
        'Decision noted: {decision}; now it needs an owner and a date.',
        "[!decision] Not decided yet: whether to {proposal}; once it is, I'll need an owner.",
        '[!decision] No decision yet, so no action items to assign.',
        '[?decision] With that decided, the follow-up needs an owner.',
        "[?decision] Since that's settled, who's doing the first piece of work?",
        "[?decision] It's decided, so let's turn it into one action with an owner and a date.",
      ],
    },
    { chance: 0.6, lines: ['[?decision] {name}, would you take the follow-up?', '[?decision] Who owns the follow-up, and by when?', "[?decision] Let's put a date on the first step.", "[?decision] I'll add it to the action list once it has an owner."] },
  ],
};

export const MEETING_VOICES: Record<string, Record<string, Recipe>> = { facilitator, skeptic, scribe, planner };
