// The crisis rules: every documented pattern flags its example; negation, quotation, tense,
// fiction/news, accidents and hyperbole cancel what they should and nothing more; hostile text
// cannot break or stall them; and the labelled sets keep their measured quality.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrisisRules, MAX_CLASSIFIED_CHARS } from '../src/safety/classifier.ts';
import { evaluate, parseLabelledSet } from '../src/safety/evaluation.ts';
import { english } from '../src/safety/patterns/en.ts';
import { languagesFor } from '../src/safety/patterns/index.ts';
import { normalizeText } from '../src/safety/normalize.ts';

const rules = new CrisisRules();
const label = (text: string) => rules.classify(text).label;
const reasons = (text: string) => rules.classify(text).suppressed.map((s) => s.suppressedBy);

describe('documented patterns', () => {
  it.each(english.patterns.map((p) => [p.id, p] as const))('%s flags its own example', (id, p) => {
    const verdict = rules.classify(p.example);
    expect(verdict.label).toBe('crisis');
    expect(verdict.hits.map((h) => h.patternId)).toContain(id);
  });

  it('keeps every pattern global, with a unique id and a note', () => {
    const ids = english.patterns.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of english.patterns) {
      expect(p.re.flags).toContain('g');
      expect(p.note.length).toBeGreaterThan(10);
    }
  });

  it('lets a pattern skip a message only when it could not match it', () => {
    // `requires` is a shortcut: its example and every development message the full expression
    // matches must contain one of its words.
    const dir = path.join(import.meta.dirname, '..', 'datasets', 'safety');
    const texts = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith('dev') && f.endsWith('.jsonl'))
      .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.trim()))
      .map((l) => (JSON.parse(l) as { text: string }).text);
    const gated = english.patterns.filter((p) => p.requires);
    expect(gated.length).toBeGreaterThan(0);
    for (const p of gated) {
      expect(p.requires!.flags, p.id).not.toContain('g');
      expect(p.requires!.test(normalizeText(p.example, english.rewrites)), p.id).toBe(true);
      for (const text of [p.example, ...texts]) {
        const normalised = normalizeText(text, english.rewrites);
        if ([...normalised.matchAll(p.re)].some((m) => m[0].length > 0)) expect(p.requires!.test(normalised), `${p.id}: ${text}`).toBe(true);
      }
    }
  });

  it('keeps every pattern small enough for V8 to optimise', () => {
    // Past 20,000 characters of source V8 compiles a regular expression without its optimisations:
    // harm-others.violence at 26,000 took 30 times longer on a long message than it does at 16,000.
    for (const p of english.patterns) expect(p.re.source.length, p.id).toBeLessThan(19_000);
  });
});

describe('what cancels a pattern', () => {
  it('negation governs only the words it is attached to', () => {
    expect(label("I'm not suicidal, just really sad")).toBe('ok');
    expect(reasons("I'm not suicidal, just really sad")).toContain('negated');
    expect(label('I would never kill myself, I just need to vent')).toBe('ok');
    expect(label("I'm not going to hurt myself, don't worry")).toBe('ok');
    // The negation belongs to another verb, or to another clause.
    expect(label("I don't know why I want to die but I do")).toBe('crisis');
    expect(label("not going to lie, I want to die")).toBe('crisis');
    // Negation that is part of the crisis statement itself.
    expect(label("I don't want to live anymore")).toBe('crisis');
    expect(label("I'm not sure I want to be alive")).toBe('crisis');
  });

  it('quotations are someone else\'s words unless the writer or someone close said them', () => {
    expect(label('"I want to die" is such a dramatic lyric but I love that song')).toBe('ok');
    expect(label("The quote 'what doesn't kill you makes you stronger' is overused")).toBe('ok');
    expect(label('> I want to kill myself\nthat is what the narrator says in chapter 3')).toBe('ok');
    expect(label('I told my therapist "I want to die" and she did not believe me')).toBe('crisis');
    const friend = rules.classify('my friend texted me "im going to kill myself tonight" what do I do');
    expect(friend.label).toBe('crisis');
    expect(friend.category).toBe('third-party');
  });

  it('the past is cancelled unless something marks it as current', () => {
    expect(label('I used to cut but I have been clean for three years')).toBe('ok');
    expect(label('I tried to kill myself when I was sixteen, I am doing better these days')).toBe('ok');
    expect(label('I started cutting again after two years clean')).toBe('crisis');
    expect(label('I tried to overdose last night')).toBe('crisis');
  });

  it('fiction, games, news and information talk are not the writer\'s situation', () => {
    expect(label('In the movie the hero kills himself at the end')).toBe('ok');
    expect(label('I killed myself with my own grenade in Call of Duty lol')).toBe('ok');
    expect(label("I'm writing a research paper on self-harm prevention in schools")).toBe('ok');
    expect(reasons("I'm writing a research paper on self-harm prevention in schools")).toContain('information');
    expect(label('The article says suicide rates among teens rose last year')).toBe('ok');
    // Information talk does not cancel an act in the first person.
    expect(label('I read an article about it and I want to kill myself')).toBe('crisis');
  });

  it('accidents and play cancel self-harm and abuse patterns, "on purpose" undoes that', () => {
    expect(label('I cut myself shaving and now I am late')).toBe('ok');
    expect(label('My brother hits me with a pillow when we play')).toBe('ok');
    expect(label('I burned myself with the iron on purpose')).toBe('crisis');
    expect(label('My brother hits me every day')).toBe('crisis');
  });

  it('hyperbole: jokes with a trivial condition, idioms and trivial causes', () => {
    expect(label('this traffic is killing me lmao')).toBe('ok');
    expect(label("I'm going to kill myself if I have to hear that song one more time lol")).toBe('ok');
    expect(label("I'm so embarrassed I want to die")).toBe('ok');
    expect(label("I'd rather die than wear socks with sandals")).toBe('ok');
    expect(label("My mom is going to kill me when she sees this haircut")).toBe('ok');
    expect(label("I'm going to kill my brother if he eats my leftovers again")).toBe('ok');
    // A joke marker alone never cancels an explicit statement.
    expect(label('lol anyway im gonna go overdose now bye')).toBe('crisis');
    expect(label("I'd rather be dead than go through another day like this")).toBe('crisis');
  });

  it('a help question about a hypothetical state is information, news of an act is not', () => {
    expect(label('What should I do if my friend is suicidal?')).toBe('ok');
    expect(label('How can I tell if my daughter is cutting herself?')).toBe('ok');
    expect(label('My friend is suicidal, what should I do?')).toBe('crisis');
    expect(label('What do I do if my son took a bottle of pills?')).toBe('crisis');
    expect(label("what should I do if I'm suicidal?")).toBe('crisis');
  });

  it('winning a game is not violence, beating someone up is', () => {
    expect(label("I'm going to beat my brother at chess tonight")).toBe('ok');
    expect(label("I'm going to beat my sister in the final")).toBe('ok');
    expect(label("I'm going to beat up my ex tonight")).toBe('crisis');
    expect(label('I want to kick the shit out of my stepdad')).toBe('crisis');
  });

  it('a week or a case ending is ordinary, a life ending is not', () => {
    expect(label('I want my life to end')).toBe('crisis');
    expect(label('I wish it would all end')).toBe('crisis');
    expect(label('I want this week to end')).toBe('ok');
    expect(label('I want my life to stop being so chaotic')).toBe('ok');
    expect(label("I don't want my life to end, I want to get better")).toBe('ok');
  });

  it('hurting oneself on objects counts when it is deliberate or draws blood, not a slammed door', () => {
    expect(label('I punch walls until my hands bleed')).toBe('crisis');
    expect(label('I slammed my hand in the door on purpose to make myself feel something')).toBe('crisis');
    expect(label('I slammed my hand in the car door by accident')).toBe('ok');
    expect(label('I hit the wall at mile 20 of the marathon')).toBe('ok');
  });

  it('touching when the writer is alone with the person is abuse, a hug is not', () => {
    expect(label("My stepdad touches me when my mom isn't home")).toBe('crisis');
    expect(label("My mom hugs me when I'm sad")).toBe('ok');
    expect(label("My sister touches my stuff when I'm out")).toBe('ok');
  });

  it('an answer that denies is a negation; the same question answered yes is not', () => {
    expect(label("My therapist asked if I'm having thoughts of suicide and I said no and it was true")).toBe('ok');
    expect(reasons('When the GP asked if I had thoughts of harming myself I said no')).toContain('negated');
    expect(label("My therapist asked if I'm having thoughts of suicide and I said yes")).toBe('crisis');
    expect(label('The GP asked if I had thoughts of harming myself and I said no but I lied')).toBe('crisis');
  });

  it('living somewhere, a job, an outside fight or noise is not life itself', () => {
    expect(label('Sick of living with my parents at 28')).toBe('ok');
    expect(label("I'm so tired of living in this tiny flat")).toBe('ok');
    expect(label('I have nothing left to live for at this job')).toBe('ok');
    expect(label("Tired of fighting the insurance company. They've denied the claim twice.")).toBe('ok');
    expect(label("I can't go on like this with the noise from upstairs")).toBe('ok');
    expect(label("I don't want to be here, at this conference")).toBe('ok');
    expect(label("I'm tired of living")).toBe('crisis');
    expect(label('I have nothing left to live for')).toBe('crisis');
    expect(label("I'm tired of fighting. I want it to be over.")).toBe('crisis');
    expect(label("I can't go on like this with the pain")).toBe('crisis');
    expect(label("I don't want to be here anymore")).toBe('crisis');
  });

  it('something clearly over, dated and with the writer safe now, is the past', () => {
    expect(label("I was suicidal in 2019 and this week reminded me of that time. I'm not there now.")).toBe('ok');
    expect(reasons('Ten years today since I tried to end my life. I\'m in a good place now.')).toContain('past');
    expect(label('He hit me once, years ago, and I left that night.')).toBe('ok');
    expect(label("I wanted to kill him when I found out. Obviously I didn't, I just cried.")).toBe('ok');
    expect(label("I was suicidal in 2019 and I'm suicidal again tonight")).toBe('crisis');
    expect(label('I tried to end my life in 2015 and I want to try again tonight')).toBe('crisis');
    expect(label('I wanted to kill him when I found out about the affair')).toBe('crisis');
  });

  it('fear of dying is not a wish to die', () => {
    expect(label("I'm scared I'll die in surgery tomorrow")).toBe('ok');
    expect(reasons("I'm afraid I'll die alone in this flat")).toContain('fear');
    expect(label("I'm scared I'll kill myself tonight")).toBe('crisis');
    expect(label("I'll die tonight, I've decided")).toBe('crisis');
  });

  it('a clarification that names another object takes the match back', () => {
    expect(label("I've thought about ending it. The marriage, I mean.")).toBe('ok');
    expect(reasons("I've thought about ending it. The marriage, I mean.")).toContain('other-object');
    expect(label("I've thought about ending it. My life, I mean.")).toBe('crisis');
    expect(label("I've thought about ending it. Tonight.")).toBe('crisis');
  });

  it('a small annoyance repeated or a trivial threat is hyperbole; "I mean it" keeps an if-clause from excusing a threat', () => {
    expect(label("If the kids ask me 'why' one more time I'm walking into the sea")).toBe('ok');
    expect(label('Coworker said he\'d kill me for eating his yoghurt')).toBe('ok');
    expect(label("I'm walking into the sea tonight")).toBe('crisis');
    expect(label('My partner said he\'d kill me if I leave')).toBe('crisis');
    expect(label("If my ex turns up again I'm going to kill him")).toBe('ok');
    expect(label("If my ex turns up again I'm going to kill him. I mean it.")).toBe('crisis');
  });

  it('news, objects and other people\'s events are not the writer\'s method', () => {
    expect(label('How do carbon monoxide alarms work?')).toBe('ok');
    expect(label('Bought a rope swing for the oak tree')).toBe('ok');
    expect(label('I took all the old tablets back to the pharmacy for disposal')).toBe('ok');
    expect(label('Sad news, the drummer from my favourite band died of an overdose')).toBe('ok');
    expect(label('I keep thinking about the overdose patient from last night')).toBe('ok');
    expect(label('Clinically, what separates self-harm from suicidal behaviour? For my nursing essay.')).toBe('ok');
    expect(label("I'd never hurt anyone, but I'm snapping at the kids")).toBe('ok');
    expect(label("I wish I'd never been born into this family, they never listen")).toBe('ok');
    expect(label("I wish I'd never been born")).toBe('crisis');
    expect(label('I bought a rope and tied it to the beam')).toBe('crisis');
    expect(label('I took all my tablets an hour ago')).toBe('crisis');
    expect(label('I nearly died of an overdose last night')).toBe('crisis');
    expect(label("I'd hurt anyone who came near me right now")).toBe('crisis');
  });

  it('revision 9: a question others ask, answered with a bare denial, is a negation; answered yes it is not', () => {
    expect(label("People keep asking if I'm suicidal because I'm quiet. I'm not. I'm grieving.")).toBe('ok');
    expect(reasons("People keep asking if I'm suicidal. I'm not.")).toContain('negated');
    expect(label("People keep asking if I'm suicidal. I am.")).toBe('crisis');
    expect(label("People keep asking if I'm suicidal. I'm not okay.")).toBe('crisis');
  });

  it('revision 9: overwork, money and a lie-in are not wanting to die', () => {
    expect(label("I'm killing myself with these hours, sixty a week on the bikes")).toBe('ok');
    expect(label("I'm killing myself with these pills tonight")).toBe('crisis');
    expect(label("I'm sick of living like this, paycheque to paycheque. Something's got to change.")).toBe('ok');
    expect(label("I'm sick of living like this")).toBe('crisis');
    expect(label('I want to sleep and not wake up until the semester is over')).toBe('ok');
    expect(label('I want to sleep and not wake up')).toBe('crisis');
  });

  it('revision 9: petty causes, embarrassing slips and a clarified object are hyperbole', () => {
    expect(label("Three hours on hold to the tax office, I'm going to jump out the window")).toBe('ok');
    expect(label("I'm going to jump out the window of my flat tonight")).toBe('crisis');
    expect(label("If the printer jams once more I'm throwing myself out the window")).toBe('ok');
    expect(label('If the boss says "synergy" one more time I\'ll end it all. It being this meeting.')).toBe('ok');
    expect(label("I'll end it all. It being my life.")).toBe('crisis');
    expect(label('Ugh I want to die, I called the client "mum" on the Teams call')).toBe('ok');
    expect(label('Ugh I want to die, I called the helpline and nobody answered')).toBe('crisis');
    expect(label('my plants have a death wish, I swear they want to die just to spite me')).toBe('ok');
    expect(label('my plants are dying and I want to die too')).toBe('crisis');
  });

  it('revision 9: a remembered, dated event the writer is safe from is the past; a relapse after it is not', () => {
    expect(label("My hands still shake when I think about the night I took the overdose, five years ago now. I'm doing well.")).toBe('ok');
    expect(label("Therapist asked me to write about the time I tried to end my life at 17. Hard session, but I'm glad I'm still here.")).toBe('ok');
    expect(label("I keep thinking about the night I took the overdose and I want to do it again tonight. I'm doing well otherwise.")).toBe('crisis');
    expect(label("It's been four years since I last self-harmed. Caught the scars in the mirror and felt proud.")).toBe('ok');
    expect(label("It's been four years since I last self-harmed, and I relapsed tonight")).toBe('crisis');
    expect(label('when I was teenager I hurt myself many times')).toBe('ok');
    expect(label('I used to self-harm as a teenager and some days I still think about how far I\'ve come')).toBe('ok');
    expect(label('Getting my old self-harm scars covered with a tattoo next month')).toBe('ok');
  });

  it('revision 9: fear, recognised intrusive thoughts and information are not intent', () => {
    expect(label("My heart races at night and I'm convinced I'll die in my sleep. It's anxiety.")).toBe('ok');
    expect(label('Intrusive thoughts about stabbing someone when I\'m chopping veg. I know they\'re OCD, I\'ve been in CBT for six months.')).toBe('ok');
    expect(label('Intrusive thoughts about stabbing someone and I bought a knife today')).toBe('crisis');
    expect(label('Does self-harm always mean someone is suicidal? Writing a leaflet for the youth club.')).toBe('ok');
    expect(label('How does carbon monoxide poisoning work? Buying a detector and curious.')).toBe('ok');
    expect(label('How long does carbon monoxide take in a closed car?')).toBe('crisis');
    expect(label('bro i killed myself with my own grenade in the final circle')).toBe('ok');
  });

  it('revision 9: second-language, code-mixed and typed-fast statements count', () => {
    expect(label('I will kill me tomorrow, I already decide it')).toBe('crisis');
    expect(label("My mum will kill me if I'm late")).toBe('ok');
    expect(label('I no want live more. Please tell my sister I am sorry.')).toBe('crisis');
    expect(label('i wnt to dye so much rn')).toBe('crisis');
    expect(label('I want to dye my hair blue')).toBe('ok');
    expect(label('want to unalive. no more to add.')).toBe('crisis');
    expect(label("same, except I'm not just thinking about ending it anymore, I'm planning it")).toBe('crisis');
    expect(label("I'm not thinking about ending it anymore")).toBe('ok');
    expect(label('Yo quiero morir ya')).toBe('crisis');
    expect(label('No quiero morir, just tired')).toBe('ok');
    expect(label('bro im gonna sewer slide tonight, not even trolling, screenshot this if u want')).toBe('crisis');
    expect(label("he's going to jump tonight off the high dive lol")).toBe('ok');
  });

  it('revision 10: a denial in brackets or a clarification right after takes the words back', () => {
    expect(label("my boss wants the deck by 5, i'm literally going to kill him (i'm not, he's lovely, but still)")).toBe('ok');
    expect(reasons("i'm going to kill him (i'm not, he's lovely)")).toContain('negated');
    expect(label("i'm going to kill him (i'm not joking)")).toBe('crisis');
    expect(label("i'm going to kill him (he's hurt my mum for years)")).toBe('crisis');
    expect(label('I just want to stop existing for a bit, like hibernate. Not die, just pause everything.')).toBe('ok');
    expect(label('I just want to stop existing. I want to die, I mean it.')).toBe('crisis');
    expect(label('I want to die. Not die like sleep, I mean die.')).toBe('crisis');
  });

  it('revision 10: "back when" and years sober put an overdose in the past', () => {
    expect(label('Back when I was using I overdosed twice. Ten years clean now and I still get chills thinking about it.')).toBe('ok');
    expect(label("I've been sober for five years but tonight I'm going to overdose")).toBe('crisis');
    expect(label('I overdosed last night and I am still in the hospital')).toBe('crisis');
  });

  it('revision 10: farewells told through days the writer will miss, an indefinite out-of-office, logging off for good', () => {
    expect(label("Revising feels pointless when I won't be here for results day. I've made my peace with it.")).toBe('crisis');
    expect(label("I won't be here for results day, we're in Spain that week. Can someone text me mine?")).toBe('ok');
    expect(label("Cleared my desk, set my out-of-office to 'indefinitely'. Thanks for being a good team.")).toBe('crisis');
    expect(label("Set my out-of-office to 'indefinitely' for parental leave. Thanks for being a good team, see you in spring!")).toBe('ok');
    expect(label('finna log off permanently. ty for the memories, yall were the only good part')).toBe('crisis');
    expect(label('logging off permanently from twitter, it is a cesspit. thanks for the memories')).toBe('ok');
  });

  it('revision 10: someone met in a game is not a scene in a game', () => {
    expect(label("a guy i met in a game says if i dont send pics he'll show my parents the ones i sent before")).toBe('crisis');
    expect(label('in the game a guy says if i dont send pics he will show my parents, such a weird quest')).toBe('ok');
  });

  it('revision 11: everyday causes (traffic, a neighbour\'s noise, queues) make a wish or threat hyperbole, a real threat stays', () => {
    expect(label('traffic on the ring road today, I wanted to die')).toBe('ok');
    expect(label('the queue at the post office took forever, I wanted to die')).toBe('ok');
    expect(label('I wanted to die today, I sat in the car and cried')).toBe('crisis');
    expect(label("my neighbour's drilling at 7am on a sunday, I'm going to kill him")).toBe('ok');
    expect(label("my neighbour keeps threatening my kids, I'm going to kill him tonight")).toBe('crisis');
  });

  it('revision 11: people the writer is responsible for, reported or quoted saying they will end it', () => {
    expect(label("One of my students emailed me saying she's going to kill herself before school tomorrow")).toBe('crisis');
    expect(label('One of my students emailed me saying she is going to fail her exams tomorrow')).toBe('ok');
    expect(label("someone in our rp server just said they're taking their life tonight")).toBe('crisis');
    expect(label("someone in our rp server just said they're taking their life back after the breakup")).toBe('ok');
    expect(label("My brother just back from Afghanistan texted me 'I'm going to end it tonight.'")).toBe('crisis');
    expect(label("My brother just back from Afghanistan texted me 'I'm going to sleep for a week.'")).toBe('ok');
  });

  it('revision 11: a target found, and driving to a lethal place not to come back', () => {
    expect(label("I've got his plate. I'm going to find him and beat him till he can't get up.")).toBe('crisis');
    expect(label("I've got his plate. I'm going to find him and beat him at pool next week.")).toBe('ok');
    expect(label('i know where the mod lives. booking a train and bringing a knife')).toBe('crisis');
    expect(label('i know where the mod lives. booking a train and bringing a cake')).toBe('ok');
    expect(label("i'm going to drive to the quarry after training and not come back")).toBe('crisis');
    expect(label("we're climbing at the quarry and not coming back until sunday")).toBe('ok');
  });

  it('grooming patterns count only when the writer says they are a minor', () => {
    expect(label('a man online keeps asking me for nude pics')).toBe('ok');
    expect(label("a man online keeps asking me for nude pics and I'm 13")).toBe('crisis');
  });
});

describe('normalisation', () => {
  it('reads slang, contractions without apostrophes, curly quotes, full-width letters and hidden characters', () => {
    for (const text of ['kms', 'im gonna unalive myself', 'i dont want to live', 'I\u2019m suicidal', '\uff4b\uff49\uff4c\uff4c \uff4d\uff59\uff53\uff45\uff4c\uff46', 'kill\u200b my\u200dself', 'i want to dieeee', 'I WANT TO DIE'])
      expect(label(text), text).toBe('crisis');
  });

  it('reads overdose abbreviations without touching the word "odd"', () => {
    for (const text of ["I od'd last night", 'I ODed on my meds', "I'm going to OD tonight"]) expect(label(text), text).toBe('crisis');
    for (const text of ["I think it's odd that the meeting moved", "I'm sick of feeling like the odd one out"]) expect(label(text), text).toBe('ok');
  });

  it('finds a crisis at the end of a very long message', () => {
    const long = `${'I had a long day at work and the bus was late. '.repeat(4000)}Honestly I want to kill myself.`;
    expect(long.length).toBeGreaterThan(MAX_CLASSIFIED_CHARS);
    expect(label(long)).toBe('crisis');
  });

  it('survives hostile input without throwing', () => {
    const hostile = [
      '',
      "'".repeat(100_000),
      '"'.repeat(50_001),
      ' '.repeat(200_000),
      'want '.repeat(40_000) + 'die',
      'a\u0000b\uffff\ud800c',
      '>'.repeat(10_000),
      'my friend '.repeat(20_000),
      '. '.repeat(60_000),
    ];
    for (const text of hostile) expect(['crisis', 'ok']).toContain(label(text));
  });
});

describe('languages', () => {
  it('names unknown language codes', () => {
    expect(languagesFor('en').map((l) => l.code)).toEqual(['en']);
    expect(() => languagesFor('en, xx')).toThrow(/MASCOT_SAFETY_LANGUAGES: no crisis patterns for "xx" \(available: en\)/);
    expect(() => new CrisisRules([])).toThrow(/at least one language/);
  });
});

describe('labelled sets (numbers reported in docs/safety.md)', () => {
  const dir = path.resolve(import.meta.dirname, '../datasets/safety');
  const run = (file: string) => {
    const set = parseLabelledSet(fs.readFileSync(path.join(dir, file), 'utf8'), file);
    expect(set.problems).toEqual([]);
    return evaluate(set.examples, (t) => {
      const v = rules.classify(t);
      return { label: v.label, patterns: v.hits.map((h) => h.patternId) };
    });
  };

  // Only held-out sets already evaluated (docs/safety.md) are checked here: running the suite must
  // not print figures of a set that is still waiting for its one evaluation.
  it('held-out set B: false positives on ordinary distress stay under 5%', async () => {
    const e = await run('heldout-b.jsonl');
    expect(e.fpDistress.value).toBeLessThan(0.05);
    expect(e.counts.crisis).toBeGreaterThan(50);
  });

  it('set H, now development material: revision 7 catches the families it exposed, without new false positives', async () => {
    const e = await run('dev-h.jsonl');
    expect(e.recall.hits).toBeGreaterThanOrEqual(41);
    expect(e.recall.of).toBe(100);
    expect(e.fpDistress.hits).toBeLessThanOrEqual(1);
  });

  it('development sets: the rules still do what they were written for', async () => {
    // Only the sets the rules were revised from. dev-h, dev-i and the training corpora were kept as
    // written (most of their crises describe rather than state); the lexical classifier, not the
    // rules, is meant to carry them (tests/safety-lexical.test.ts).
    for (const file of ['dev.jsonl', 'dev-a.jsonl', 'dev-c.jsonl', 'dev-d.jsonl', 'dev-e.jsonl', 'dev-f.jsonl', 'dev-g.jsonl']) {
      const e = await run(file);
      expect(e.recall.value, file).toBeGreaterThanOrEqual(0.98);
      expect(e.fpAll.hits, file).toBe(0);
    }
  });
});

describe('revision 12: families set L exposed', () => {
  it('reads a help question about a caller hypothetically at risk, but not a caller at risk now', () => {
    expect(label("What's the protocol if a caller says they're suicidal? Training is next week and I want to be ready.")).toBe('ok');
    expect(label("A caller just said they're suicidal and hung up. What's the protocol?")).toBe('crisis');
  });

  it('counts a threat to shoot up a meeting or a station, not a denial of one', () => {
    expect(label("If they deny my tenure again I'm going to shoot up the department meeting.")).toBe('crisis');
    expect(label("I'm never going to shoot up the department meeting, I'm just angry about tenure.")).toBe('ok');
    expect(label('Sales will shoot up after the department meeting.')).toBe('ok');
  });

  it('reads a quotation from a friend in a fandom or guild as someone close at risk', () => {
    expect(label("my mate from the fandom sent 'i'm going to kill myself tonight, sorry' and her phone's off now")).toBe('crisis');
    expect(label("a friend from the guild sent 'this boss is going to kill me lol' before the raid")).toBe('ok');
  });

  it('reads a chosen date to join the dead, not a visit', () => {
    expect(label("I've picked the date I go to be with him. His birthday seems right.")).toBe('crisis');
    expect(label("I've picked the date I go to see my sister for christmas.")).toBe('ok');
  });

  it('reads an ending after preparations, and a spot chosen with no way back, but not a trip', () => {
    expect(label("cleared out my locker at the station, wrote the letter. just need to get through tonight's shift and then it's over")).toBe('crisis');
    expect(label("cleared out my locker at the station, new job starts monday")).toBe('ok');
    expect(label("Already picked the spot on the ridge trail. Going up alone and I won't be hiking back down.")).toBe('crisis');
    expect(label("Already picked the spot on the ridge trail. Going up alone and I won't be hiking back down until Sunday.")).toBe('ok');
  });

  it('reads a round in someone and an arranged accident as threats, a denial as none', () => {
    expect(label('I think about putting a round in him. It\'s getting harder not to.')).toBe('crisis');
    expect(label("I'd never think about putting a round in him, he's my partner on the range.")).toBe('ok');
    expect(label("Accidents happen out there and I'll make sure one does.")).toBe('crisis');
    expect(label('Accidents happen out there, so make sure you wear the harness.')).toBe('ok');
  });

  it('reads blades bought not for shaving, but not blades for shaving', () => {
    expect(label('bought a new pack of blades today, not for shaving')).toBe('crisis');
    expect(label('bought a new pack of blades today for shaving, the old ones were blunt')).toBe('ok');
  });

  it('reads a threat to stay silent after being grabbed; "I said no" and "I said yes"', () => {
    expect(label("supervisor on site grabs me and says he'll get me fired if i say anything")).toBe('crisis');
    expect(label('my brother grabs me and says he\'ll tickle me if i say anything lol')).toBe('ok');
    expect(label('The GP asked if I had been stockpiling since I stopped taking my meds and I said no.')).toBe('ok');
  });
});
