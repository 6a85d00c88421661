import { processIo } from './io';
import { runCli } from './program';

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
