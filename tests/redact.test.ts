import { describe, expect, it } from 'vitest';
import { findPersonalDetails, redact } from '../src/privacy/redact.ts';

describe('redact', () => {
  it('replaces e-mail addresses, including Slack mailto markup', () => {
    expect(redact('write me at jane.doe+work@example.co.uk, thanks')).toBe('write me at [email], thanks');
    expect(redact('mail <mailto:bob@corp.example|bob@corp.example> now')).toBe('mail [email] now');
  });

  it('replaces phone numbers in common national and international formats', () => {
    for (const phone of ['+1 (555) 123-4567', '555-123-4567', '(555) 123 4567', '+44 20 7946 0958', '0049 30 1234567', '5551234567', '555.123.4567', '07700 900123']) {
      expect(redact(`call ${phone} tonight`), phone).toBe('call [phone] tonight');
    }
    expect(redact('my number is <tel:+15551234567|555 123 4567>')).toBe('my number is [phone]');
  });

  it('leaves dates, times, years, amounts, counts and versions alone', () => {
    const keep = [
      'We meet on 2024-03-15 at 10:30.',
      'The deadline is 15/03/2024.',
      'Between 2019 2020 2021 things were hard.',
      'It cost $1,250,000 last year.',
      'Upgrade to 1.12.3 first.',
      'I have 3 kids and 2 dogs.',
      'Room 101, floor 3, 4 people.',
    ];
    for (const text of keep) expect(redact(text), text).toBe(text);
  });

  it('replaces Discord and Slack user, role and channel mentions and plain @handles', () => {
    expect(redact('thanks <@123456789012345678> and <@!98765>')).toBe('thanks [user] and [user]');
    expect(redact('ping <@&55555> in <#C0123ABC|general> or <#111222333>')).toBe('ping [user] in [channel] or [channel]');
    expect(redact('ask <@U024BE7LH|alice> or <!subteam^S0614TZR7|@design>')).toBe('ask [user] or [user]');
    expect(redact('as @maria_k said.')).toBe('as [user] said.');
  });

  it('never treats @everyone or @here as a person', () => {
    expect(redact('hey @everyone and @here')).toBe('hey @everyone and @here');
  });

  it('replaces links with and without a scheme, keeping sentence punctuation', () => {
    expect(redact('see https://example.com/a?b=1#c. Then')).toBe('see [link]. Then');
    expect(redact('at www.my-blog.net/post/3 and <https://x.io/p|my page>')).toBe('at [link] and [link]');
    expect(redact('on example.org/path too')).toBe('on [link] too');
    expect(redact('a link (https://example.com/x) in brackets')).toBe('a link ([link]) in brackets');
  });

  it('does not split an e-mail inside a link or a handle inside an e-mail', () => {
    expect(redact('https://example.com/u/a@b.com')).toBe('[link]');
    expect(findPersonalDetails('a@b.example').map((d) => d.kind)).toEqual(['email']);
  });

  it('replaces known names as whole words, with pseudonyms when given a map', () => {
    expect(redact('Maria told Mariana about it; maria agreed.', { names: ['Maria'] })).toBe('[name] told Mariana about it; [name] agreed.');
    const names = new Map([['Jane Doe', 'Person A'], ['Bob', 'Person B']]);
    expect(redact('Jane Doe and bob met', { names })).toBe('Person A and Person B met');
  });

  it('reports spans in order without overlaps', () => {
    const text = 'mail a@b.com or call 555-123-4567 or see https://x.io';
    const found = findPersonalDetails(text);
    expect(found.map((d) => d.kind)).toEqual(['email', 'phone', 'link']);
    for (const d of found) expect(text.slice(d.start, d.end)).not.toMatch(/^\s|\s$/);
    for (let i = 1; i < found.length; i++) expect(found[i]!.start).toBeGreaterThanOrEqual(found[i - 1]!.end);
  });

  it('returns text without personal details unchanged', () => {
    const text = 'I moved abroad and feel so alone since my husband travels for work.';
    expect(redact(text)).toBe(text);
  });
});
