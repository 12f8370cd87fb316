// The extractive recap: decision cues, action items with owners and due dates, and what is not one.
import { describe, expect, it } from 'vitest';
import { extractiveRecap, sentencesOf } from '../src/meeting/extract.ts';
import { recapText, type ThreadMessage } from '../src/meeting/recap.ts';

let clock = 0;
const said = (authorName: string, text: string, isBot = false): ThreadMessage => ({ authorId: authorName.toLowerCase(), authorName, isBot, text, at: ++clock });

describe('extractive recap', () => {
  it('finds the decisions the thread took, in the words used', () => {
    const recap = extractiveRecap([
      said('Dana', 'Which vendor for the warehouse?'),
      said('Lee', 'We decided to keep the current vendor for another year.'),
      said('Kim', "Let's go with quarterly reviews of the contract."),
      said('Dana', 'Decision: the budget stays at 40k.'),
    ]);
    expect(recap.decisions.map((d) => d.text)).toEqual([
      'We decided to keep the current vendor for another year',
      "Let's go with quarterly reviews of the contract",
      'The budget stays at 40k',
    ]);
    expect(recap.decisions.map((d) => d.by)).toEqual(['Lee', 'Kim', 'Dana']);
  });

  it('reads a bare "Agreed." as agreement with the proposal before it', () => {
    const recap = extractiveRecap([
      said('Dana', 'I think we should move the launch to March.'),
      said('Lee', 'Agreed, March works.'),
    ]);
    expect(recap.decisions).toEqual([{ text: 'I think we should move the launch to March', by: 'Dana' }]);
  });

  it('does not count questions, negations or undecided topics as decisions', () => {
    const recap = extractiveRecap([
      said('Dana', 'Have we decided on pricing?'),
      said('Lee', "We haven't decided on the logo yet."),
      said('Kim', 'There is no decision on hiring.'),
      said('Dana', 'Agreed?'),
    ]);
    expect(recap.decisions).toEqual([]);
  });

  it('keeps the later wording when a decision is restated', () => {
    const recap = extractiveRecap([said('Dana', 'We agreed to launch in March.'), said('Lee', 'Decision: we agreed to launch in March, on the 14th.')]);
    expect(recap.decisions.map((d) => d.text)).toEqual(['We agreed to launch in March, on the 14th']);
  });

  it('finds action items with their owners and due dates', () => {
    const recap = extractiveRecap(
      [
        said('Dana', 'Action item: @Priya Nair to update the roadmap by Friday.'),
        said('Lee', "I'll send the customer announcement draft tomorrow morning."),
        said('Kim', 'Sam will book the usability study before next week.'),
        said('Dana', 'Lee, can you check the legal wording?'),
        said('Lee', 'Action item: clean up the staging data by end of month.'),
        said('Kim', 'Write the FAQ, assigned to @Dana.'),
      ],
      { knownNames: ['Priya Nair'] },
    );
    expect(recap.actionItems).toEqual([
      { owner: 'Priya Nair', task: 'update the roadmap', due: 'Friday' },
      { owner: 'Lee', task: 'send the customer announcement draft tomorrow morning' },
      { owner: 'Sam', task: 'book the usability study', due: 'next week' },
      { owner: 'Lee', task: 'check the legal wording' },
      { task: 'Clean up the staging data', due: 'end of month' },
      { owner: 'Dana', task: 'Write the FAQ' },
    ]);
  });

  it('does not make owners of ordinary words or plans that are not tasks', () => {
    const recap = extractiveRecap([
      said('Dana', 'It will rain on the offsite, probably.'),
      said('Lee', 'Remember to breathe.'),
      said('Kim', 'Who will own the rollout?'),
      said('Sam', 'Dana will be out next week.'),
      said('Lee', 'We will see how it goes.'),
    ]);
    expect(recap.actionItems).toEqual([]);
  });

  it('ignores companion bots: their lines are commentary, not the record', () => {
    const recap = extractiveRecap([said('Dana', 'Launch date?'), said('Scribe', 'Decision: launch on Monday. Action item: Dana to ship it.', true)]);
    expect(recap.decisions).toEqual([]);
    expect(recap.actionItems).toEqual([]);
    expect(recap.participants).toEqual(['Dana']);
  });

  it('summarises with the opening question and the points the thread kept returning to', () => {
    const recap = extractiveRecap([
      said('Dana', 'Should the onboarding emails move to week two?'),
      said('Lee', 'Onboarding emails in week one get ignored by most new users.'),
      said('Kim', 'lol'),
      said('Sam', 'New users open onboarding emails more often in week two, our data says.'),
      said('Lee', 'Thanks all.'),
    ]);
    expect(recap.summary).toMatch(/^Dana asked: “Should the onboarding emails move to week two\?”/);
    expect(recap.summary).toContain('Points raised:');
    expect(recap.summary).toContain('(Sam)');
    expect(recap.summary).not.toContain('lol');
    expect(recap.summary).toMatch(/4 people, 5 messages\.$/);
  });

  it('renders as plain text with empty sections marked', () => {
    const text = recapText(extractiveRecap([said('Dana', 'Quick sync, nothing to decide.')]));
    expect(text).toContain('Decisions:\n- none recorded');
    expect(text).toContain('Action items:\n- none recorded');
  });

  it('splits messages into sentences and drops list markers', () => {
    expect(sentencesOf('- First point. Second point!\n2) Third? @Dana fourth')).toEqual(['First point.', 'Second point!', 'Third?', '@Dana fourth']);
  });
});
