// `npm run bench` section "recap": how long the extractive recap takes on meeting threads of
// typical and Slack-maximal length (the Slack adapter reads at most 1000 messages of a thread).
import type { BenchRow, BenchSection } from '../bench/section.ts';
import { timeEach } from '../bench/measure.ts';
import { createRng } from '../util/rng.ts';
import { extractiveRecap } from './extract.ts';
import type { ThreadMessage } from './recap.ts';

const PEOPLE = ['Dana', 'Lee', 'Kim', 'Sam', 'Priya Nair', 'Alex'];
const LINES = [
  'I think we should move the launch to March.',
  'QA found two blockers in the payment flow, and the fix needs a week.',
  'Agreed.',
  'What does support need from us before the release?',
  "Let's go with the staged rollout starting at ten percent.",
  'Action item: @Priya Nair to update the roadmap by Friday.',
  "I'll send the customer announcement draft tomorrow.",
  'The onboarding emails in week one mostly go unread.',
  'We haven\'t decided on pricing yet.',
  'Sam will book the usability study before next week.',
  'Can we keep the scope to the checkout page for now?',
  'Decision: the beta stays invite-only until April.',
];

/** A synthetic meeting thread; the same for a given length. */
export function syntheticThread(length: number, seed = 7): ThreadMessage[] {
  const rng = createRng(seed);
  return Array.from({ length }, (_, i) => {
    const author = PEOPLE[Math.floor(rng.next() * PEOPLE.length)]!;
    const text = LINES[Math.floor(rng.next() * LINES.length)]!;
    return { authorId: author.toLowerCase(), authorName: author, isBot: rng.next() < 0.15, text, at: i };
  });
}

export const recapBench: BenchSection = {
  name: 'recap',
  async run({ quick }) {
    const rows: BenchRow[] = [];
    for (const length of quick ? [50] : [50, 1000]) {
      const thread = syntheticThread(length);
      const recap = extractiveRecap(thread);
      const t = await timeEach(quick ? 5 : length > 100 ? 50 : 300, () => extractiveRecap(thread), quick ? 1 : 10);
      rows.push({
        metric: `extractive recap, ${length} messages`,
        value: `median ${(t.medianUs / 1000).toFixed(2)} ms, p99 ${(t.p99Us / 1000).toFixed(2)} ms (n=${t.n}; ${recap.decisions.length} decisions, ${recap.actionItems.length} action items)`,
      });
    }
    return rows;
  },
};
