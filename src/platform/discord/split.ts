// Discord takes at most 2000 characters per message. Longer turns are split where a reader would
// pause: a paragraph break, else a sentence end, else a space; a hard cut only for one endless word.

export const DISCORD_MESSAGE_LIMIT = 2000;

/** Where to cut `text` so the head has at most `max` characters. */
function cutPoint(text: string, max: number): number {
  const head = text.slice(0, max + 1);
  // Never cut so early that the chunk is a sliver: prefer breaks in the second half.
  const floor = Math.floor(max / 2);
  const paragraph = head.lastIndexOf('\n\n', max);
  if (paragraph >= floor) return paragraph;
  let sentence = -1;
  for (const m of head.matchAll(/[.!?…]["')\]]*(?=\s)/g)) if (m.index + m[0].length <= max) sentence = m.index + m[0].length;
  if (sentence >= floor) return sentence;
  const line = head.lastIndexOf('\n', max);
  if (line >= floor) return line;
  const space = head.lastIndexOf(' ', max);
  if (space >= floor) return space;
  return max;
}

/** Split text into chunks of at most `max` characters, trimmed, none empty. */
export function splitMessage(text: string, max: number = DISCORD_MESSAGE_LIMIT): string[] {
  if (max < 1) throw new RangeError('max must be at least 1');
  const chunks: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const cut = cutPoint(rest, max);
    const chunk = rest.slice(0, cut).trim();
    if (chunk) chunks.push(chunk);
    rest = rest.slice(cut).trim();
  }
  if (rest) chunks.push(rest);
  return chunks;
}
