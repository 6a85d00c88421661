/** `npm run bench`: every benchmark, side by side with its baseline in the same run, printed as ratios. */
import { benchFollow } from './follow.bench';

async function main() {
  const results: Array<[string, Record<string, number>]> = [];
  results.push(['follow a 100k-event task (ours: byte-offset tail; baseline: 200 ms whole-file polling)', await benchFollow()]);
  for (const [name, figures] of results) {
    console.log(`\n## ${name}`);
    for (const [key, value] of Object.entries(figures)) console.log(`  ${key.padEnd(28)} ${Number.isInteger(value) ? value : value.toFixed(2)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
