/**
 * What `caesar diff` prints without `--all`: a terminal is no place for 200 MB of patch (issue 23). The head is
 * shown, cut at a line end, and the rest counted, so the user knows how much was left out and how to see it.
 */
export const DIFF_MAX_FILES_SHOWN = 200;
export const DIFF_MAX_PATCH_LINES = 5000;
export const DIFF_MAX_PATCH_BYTES = 1024 * 1024;

export interface CappedText {
  shown: string;
  /** Lines and bytes (UTF-8) left out; 0 when the text is whole. */
  omittedLines: number;
  omittedBytes: number;
}

/** The first `maxLines` lines of `text`, and no more than about `maxBytes` of it, cut at a line end. */
export function capLines(text: string, maxLines = DIFF_MAX_PATCH_LINES, maxBytes = DIFF_MAX_PATCH_BYTES): CappedText {
  let end = 0;
  let lines = 0;
  // Characters stand in for bytes while cutting (at most 4× off for non-ASCII); the counts below are exact.
  while (lines < maxLines && end < text.length && end < maxBytes) {
    const next = text.indexOf('\n', end);
    if (next === -1 || next + 1 > maxBytes) {
      if (lines === 0) end = Math.min(text.length, maxBytes); // one huge line: its head
      else if (next === -1 && text.length <= maxBytes) end = text.length;
      break;
    }
    end = next + 1;
    lines++;
  }
  if (end >= text.length) return { shown: text, omittedLines: 0, omittedBytes: 0 };
  const rest = text.slice(end);
  return { shown: text.slice(0, end), omittedLines: countLines(rest), omittedBytes: Buffer.byteLength(rest, 'utf8') };
}

function countLines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
