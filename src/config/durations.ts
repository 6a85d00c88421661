/**
 * Durations in the config: a string `<digits>` (milliseconds) or `<digits><unit>` with unit ms, s, m or h, surrounding
 * blanks ignored; or a TOML number of milliseconds (truncated, never negative). Fractions ("1.5m") and inner blanks
 * ("10 m") are refused on purpose: they read differently to different people.
 */
export const DURATION_FORMS = '"<digits>" (milliseconds), "<digits>ms", "<digits>s", "<digits>m", "<digits>h", or a number of milliseconds';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export class DurationError extends Error {
  override readonly name = 'DurationError';
}

/** Milliseconds for a configured duration; throws DurationError listing the accepted forms. */
export function parseDuration(value: unknown): number {
  if (typeof value === 'bigint') value = Number(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new DurationError(`invalid duration ${String(value)}: expected ${DURATION_FORMS}`);
    return Math.trunc(value);
  }
  if (typeof value !== 'string') throw new DurationError(`invalid duration: expected ${DURATION_FORMS}`);
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new DurationError(`invalid duration "${value}": expected ${DURATION_FORMS}`);
  const amount = Number(match[1]);
  const ms = amount * UNIT_MS[match[2] ?? 'ms']!;
  if (!Number.isSafeInteger(ms)) throw new DurationError(`duration "${value}" is too large`);
  return ms;
}

/** The shortest exact spelling of a millisecond count as configuration writes it ("10m", "90s", "1500ms"); display text uses src/common/format.ts. */
export function formatConfigDuration(ms: number): string {
  if (ms > 0 && ms % UNIT_MS.h! === 0) return `${ms / UNIT_MS.h!}h`;
  if (ms > 0 && ms % UNIT_MS.m! === 0) return `${ms / UNIT_MS.m!}m`;
  if (ms > 0 && ms % UNIT_MS.s! === 0) return `${ms / UNIT_MS.s!}s`;
  return `${ms}ms`;
}
