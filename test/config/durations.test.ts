import { strict as assert } from 'node:assert';
import { DurationError, formatConfigDuration, parseDuration } from '../../src/config';

describe('config durations', () => {
  it('accepts digits (ms), the four units, trimmed edges and TOML numbers', () => {
    assert.equal(parseDuration('1500'), 1500);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('10m'), 600_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('  5s\t'), 5000);
    assert.equal(parseDuration(1234.9), 1234, 'a number is milliseconds, truncated');
    assert.equal(parseDuration(0), 0);
  });

  for (const bad of ['1.5m', '10 m', '5d', 'm', '', '-5s', 'ten', '5S']) {
    it(`refuses ${JSON.stringify(bad)} and lists the accepted forms`, () => {
      assert.throws(
        () => parseDuration(bad),
        (err: Error) => err instanceof DurationError && err.message.includes('"<digits>s"') && err.message.includes('number of milliseconds'),
      );
    });
  }

  it('refuses negative numbers, NaN and non-strings', () => {
    assert.throws(() => parseDuration(-1), DurationError);
    assert.throws(() => parseDuration(Number.NaN), DurationError);
    assert.throws(() => parseDuration(true), DurationError);
  });

  it('formats with the largest exact unit', () => {
    assert.equal(formatConfigDuration(600_000), '10m');
    assert.equal(formatConfigDuration(90_000), '90s');
    assert.equal(formatConfigDuration(3_600_000), '1h');
    assert.equal(formatConfigDuration(1500), '1500ms');
    assert.equal(formatConfigDuration(0), '0ms');
  });
});
