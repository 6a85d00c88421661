import { formatDuration, formatUsage as formatUsageIn } from '../../common/format';
import type { Usage } from '../../protocol';

// The tree reads durations and usage as the CLI and the timeline do: one set of formatters (src/common/format.ts).
export { formatDuration };

/** "12.3k tok · $0.042", or '' when the agent reported nothing. */
export function formatUsage(usage: Usage | undefined): string {
  return formatUsageIn(usage, 'brief') ?? '';
}

/** The first line of a text, cut to a tree-label length. */
export function oneLine(text: string, max = 120): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
