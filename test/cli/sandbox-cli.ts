import * as path from 'node:path';
import type { CliIo } from '../../src/cli/io';
import { runCli } from '../../src/cli/program';
import type { Sandbox } from '../config/helpers';

export interface InProcessRun {
  code: number;
  out: string;
  err: string;
  json: any;
}

/** Runs `caesar <argv>` in-process with cwd at the sandbox root, HOME at its home and an empty PATH by default. */
export async function caesarInSandbox(box: Sandbox, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<InProcessRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    stdoutIsTTY: false,
    cwd: box.root,
    env: { HOME: box.home, PATH: path.join(box.home, 'no-agents'), ...env },
  };
  const code = await runCli(argv, io);
  const text = out.join('\n');
  let json: unknown;
  if (argv.includes('--json') && code === 0) json = JSON.parse(text);
  return { code, out: text, err: err.join('\n'), json };
}
