// Word lists the offline voice reads a message with: feelings, people, topics, meeting cues.
// Data only; reading.ts applies them.

export type FeelingFamily = 'lonely' | 'sad' | 'grief' | 'fear' | 'overwhelm' | 'anger' | 'hurt' | 'shame' | 'tired' | 'stuck' | 'numb' | 'envy' | 'hopeless' | 'positive';

export interface FeelingEntry {
  /** Words or phrases that name the feeling (matched as whole words, case-insensitive). */
  words: string[];
  /** Adjective phrase used after "feel"; undefined means: the word as the person said it. */
  adj?: string;
  /** Mass noun used in "the ___" / "a lot of ___". */
  noun: string;
  family: FeelingFamily;
}

export const FEELINGS: FeelingEntry[] = [
  { words: ['alone', 'lonely', 'isolated', 'lonesome', 'cut off'], noun: 'loneliness', family: 'lonely' },
  { words: ['homesick'], noun: 'homesickness', family: 'lonely' },
  { words: ['invisible', 'unseen', 'forgotten'], noun: 'hurt of not being seen', family: 'hurt' },
  { words: ['sad', 'down', 'low', 'blue', 'unhappy', 'miserable'], noun: 'sadness', family: 'sad' },
  { words: ['depressed'], adj: 'really low', noun: 'heaviness', family: 'sad' },
  { words: ['heartbroken', 'devastated', 'crushed', 'grieving'], noun: 'grief', family: 'grief' },
  { words: ['anxious', 'nervous', 'on edge', 'uneasy', 'panicky'], noun: 'anxiety', family: 'fear' },
  { words: ['worried'], noun: 'worry', family: 'fear' },
  { words: ['scared', 'afraid', 'terrified', 'frightened'], noun: 'fear', family: 'fear' },
  { words: ['overwhelmed', 'swamped', 'drowning', 'buried'], noun: 'overwhelm', family: 'overwhelm' },
  { words: ['stressed', 'stressed out', 'under pressure', 'pressured'], noun: 'stress', family: 'overwhelm' },
  { words: ['angry', 'furious', 'pissed', 'pissed off', 'livid'], noun: 'anger', family: 'anger' },
  { words: ['frustrated', 'fed up', 'annoyed', 'irritated', 'resentful'], noun: 'frustration', family: 'anger' },
  { words: ['hurt', 'betrayed', 'rejected', 'abandoned', 'left out', 'ignored', 'unappreciated', 'taken for granted'], noun: 'hurt', family: 'hurt' },
  { words: ['ashamed', 'embarrassed', 'humiliated'], noun: 'shame', family: 'shame' },
  { words: ['guilty'], noun: 'guilt', family: 'shame' },
  { words: ['useless', 'worthless', 'like a failure', 'like a burden', 'stupid', 'not good enough', 'inadequate'], noun: 'self-doubt', family: 'shame' },
  { words: ['tired', 'exhausted', 'drained', 'burned out', 'burnt out', 'worn out', 'worn down'], noun: 'exhaustion', family: 'tired' },
  { words: ['lost', 'confused', 'unsure', 'uncertain', 'directionless'], noun: 'uncertainty', family: 'stuck' },
  { words: ['stuck', 'trapped'], noun: 'sense of being stuck', family: 'stuck' },
  { words: ['numb', 'empty', 'flat'], noun: 'numbness', family: 'numb' },
  { words: ['jealous', 'envious'], noun: 'envy', family: 'envy' },
  { words: ['hopeless', 'helpless', 'powerless'], noun: 'hopelessness', family: 'hopeless' },
  { words: ['not okay', 'not ok', 'not fine', 'not alright', 'not good'], adj: 'low', noun: 'heaviness', family: 'sad' },
  { words: ['happy', 'excited', 'proud', 'relieved', 'hopeful', 'grateful'], noun: 'hope', family: 'positive' },
];

/** Words that strengthen a feeling word; kept with it when the person used one ("so alone"). */
export const INTENSIFIERS = ['so', 'really', 'very', 'completely', 'totally', 'pretty', 'quite', 'kind of', 'kinda', 'a bit', 'a little', 'incredibly', 'super', 'utterly', 'deeply', 'extremely'];

export type PersonKind = 'partner' | 'family' | 'friend' | 'work' | 'other';

/** People someone may mention as "my ___"; the kind decides which lines fit. */
export const RELATIONS: Record<PersonKind, string[]> = {
  partner: ['husband', 'wife', 'partner', 'boyfriend', 'girlfriend', 'spouse', 'fiance', 'fiancee', 'fiancé', 'fiancée'],
  family: ['mom', 'mum', 'mother', 'dad', 'father', 'parents', 'sister', 'brother', 'son', 'daughter', 'kids', 'children', 'family', 'grandma', 'grandmother', 'grandpa', 'grandfather', 'in-laws', 'aunt', 'uncle', 'cousin', 'baby'],
  friend: ['friend', 'friends', 'best friend', 'roommate', 'flatmate', 'neighbour', 'neighbor'],
  work: ['boss', 'manager', 'coworker', 'coworkers', 'colleague', 'colleagues', 'team', 'teacher', 'professor', 'supervisor', 'client'],
  other: ['ex', 'therapist', 'doctor', 'landlord', 'dog', 'cat'],
};

/** Modifiers allowed between "my" and the relation word ("my older sister"). */
export const RELATION_MODIFIERS = ['best', 'older', 'younger', 'little', 'big', 'new', 'old', 'late', 'step', 'ex', 'elder', 'twin'];

export interface TopicEntry {
  /** Regular expression source, matched case-insensitively on word boundaries by the reader. */
  pattern: string;
  /** Noun phrase for templates ("{topic}"). */
  phrase: string;
}

/** Topics of support conversations and of meeting threads. Order matters only for ties. */
export const TOPICS: Record<string, TopicEntry> = {
  relocation: { pattern: String.raw`moved (?:abroad|here|away|overseas|countries|cities|to)|moving (?:abroad|away|overseas)|abroad|overseas|new (?:city|country|town|place)|expat|immigra\w*|emigrat\w*|relocat\w*|far from home|back home|homesick\w*|foreign country`, phrase: 'starting over somewhere new' },
  loneliness: { pattern: String.raw`alone|lonely|loneliness|isolated|no friends|nobody to talk to|no one to talk to`, phrase: 'feeling alone' },
  partner: { pattern: String.raw`husband|wife|partner|boyfriend|girlfriend|spouse|marriage|married|fianc\w*`, phrase: 'your relationship' },
  breakup: { pattern: String.raw`broke up|break ?-?up|divorc\w*|separated|dumped|my ex`, phrase: 'the breakup' },
  family: { pattern: String.raw`mom|mum|mother|dad|father|parents|sister|brother|family|son|daughter|kids|in-laws`, phrase: 'your family' },
  work: { pattern: String.raw`(?<!for )work|working|job|boss|manager|coworkers?|colleagues?|promotion|fired|laid off|layoffs?|office|career|workload|shifts?`, phrase: 'work' },
  jobloss: { pattern: String.raw`lost (?:my|our|his|her) job|laid off|layoffs?|got fired|was fired|been fired|redundan\w*|let go|unemployed|out of work|job ?hunting|job search`, phrase: 'losing your job' },
  study: { pattern: String.raw`exams?|school|university|college|classes|semester|grades|thesis|homework|studying|studies`, phrase: 'your studies' },
  grief: { pattern: String.raw`died|passed away|funeral|grief|grieving|death|miscarriage|lost my (?:mom|mum|mother|dad|father|husband|wife|partner|sister|brother|friend|dog|cat|grandma|grandpa)`, phrase: 'this loss' },
  health: { pattern: String.raw`sick|illness|diagnos\w*|hospital|chronic|surgery|injury|injured|pain`, phrase: 'your health' },
  money: { pattern: String.raw`money|rent|debt|bills|afford|loan|salary|paycheck|savings`, phrase: 'money worries' },
  sleep: { pattern: String.raw`sleep|sleeping|insomnia|awake at night|nightmares|can't sleep`, phrase: 'your sleep' },
  friends: { pattern: String.raw`friends?|friendships?`, phrase: 'your friendships' },
  conflict: { pattern: String.raw`argument|arguing|argued|fight|fighting|fought|yelled|shouted|conflict`, phrase: 'the conflict' },
  stress: { pattern: String.raw`stress\w*|overwhelm\w*|too much|burn(?:ed|t)? ?out|burnout|pressure|deadlines?`, phrase: 'everything on your plate' },
  thanks: { pattern: String.raw`thanks|thank you|thx|appreciate (?:it|this|you|that)`, phrase: 'what helped' },
  /** The companions themselves are the problem: listen, and be honest about what the offline voice is. */
  complaint: { pattern: String.raw`you (?:guys |all |bots )?(?:don't|do not|never|aren't|are not|can't|cannot) (?:understand|listen|help|get it|get me)|(?:you|you guys|this|these bots?) (?:are|is) (?:useless|stupid|annoying|pointless|not helping|no help)|this isn't helping|not helpful|you're not listening`, phrase: 'what we missed' },
  // Meeting threads.
  time: { pattern: String.raw`running out of time|out of time|minutes left|over ?time|running late|time check|wrap (?:this )?up|one more thing|another thing|next agenda|agenda`, phrase: 'the time we have' },
  launch: { pattern: String.raw`launch\w*|release\w*|ship(?:ping)?|roll ?-?out|deploy\w*|go-live`, phrase: 'the launch' },
  cost: { pattern: String.raw`cheap\w*|costs?|budget|pric(?:e|es|ing)|expensive|spend`, phrase: 'the cost' },
  vendor: { pattern: String.raw`vendors?|suppliers?|contracts?|procurement`, phrase: 'the vendor choice' },
  hiring: { pattern: String.raw`hir(?:e|ing)|headcount|candidates?|recruit\w*`, phrase: 'hiring' },
};

/** Words that make a sweeping claim; Catalyst gently questions them. */
export const ABSOLUTES = ['always', 'never', 'nobody', 'no one', 'everyone', 'everybody', 'everything', 'nothing', 'forever'];

/** Capitalised words that are not names of people. */
export const NOT_NAMES = new Set(
  'I Im Ill Ive Id OK Okay Yes No The A An We You They He She It This That Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December Q1 Q2 Q3 Q4 API QA HR UI UX EOD EOW Agreed Thanks Sure Also And But So Maybe Let Lets Can Could Should Would Will Who What When Where Why How Which Someone Somebody Anyone Everyone Nobody Noone'.split(' '),
);

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
export const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** Past-tense forms that are not "-ed" (to tell events from ongoing circumstances). */
export const IRREGULAR_PAST = new Set(
  "was were had got went lost left broke told said took came made found felt quit gave began became fell forgot heard kept knew met paid ran sent spent stood thought understood won wrote did saw bought brought caught chose drove fought hid hit hurt let put read rode sang sat slept sold spoke split stole swore threw woke didn't wasn't weren't hadn't".split(' '),
);
