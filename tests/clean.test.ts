import { describe, expect, it } from 'vitest';
import { cleanOutput, cutAtSentence } from '../src/speaker/clean.ts';

const opts = { speaker: 'Anchor', others: ['Catalyst', 'Beacon', 'Sam'] };

describe('output cleaning', () => {
  it('strips a leading label of the speaker itself', () => {
    expect(cleanOutput('Anchor: That sounds lonely.', opts)).toBe('That sounds lonely.');
    expect(cleanOutput('**Anchor**: That sounds lonely.', opts)).toBe('That sounds lonely.');
    expect(cleanOutput('assistant: Hi.', opts)).toBe('Hi.');
  });

  it('cuts where the model starts speaking as another participant', () => {
    expect(cleanOutput('That sounds lonely.\nCatalyst: What would help?', opts)).toBe('That sounds lonely.');
    expect(cleanOutput('That sounds lonely.\nSam: yes it is', opts)).toBe('That sounds lonely.');
    expect(cleanOutput('It helps.\nAnchor: and another turn', opts)).toBe('It helps.');
  });

  it('collapses empty output to nothing', () => {
    expect(cleanOutput('   \n ', opts)).toBe('');
    expect(cleanOutput('Anchor:   ', opts)).toBe('');
    expect(cleanOutput('Catalyst: I will answer instead', opts)).toBe('');
  });

  it('never lets a mass ping through', () => {
    const out = cleanOutput('Hey @everyone and @here, look <!channel>', opts);
    expect(out).not.toMatch(/@everyone|@here|<!channel>/);
  });

  it('enforces the length limit at a sentence boundary', () => {
    const text = 'First sentence is here. Second sentence is a bit longer. Third one goes past the limit for sure.';
    const out = cleanOutput(text, { ...opts, maxLength: 60 });
    expect(out).toBe('First sentence is here. Second sentence is a bit longer.');
    expect(cutAtSentence('a'.repeat(100), 10).length).toBeLessThanOrEqual(10);
  });
});
