import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { testSwitch, testSwitchName, type TestSwitch } from '../base/test-switches';

/**
 * Finds a file shipped in dist/ (the CLI bundle, the demo agent) from wherever the code runs:
 * 1. an explicit override in the environment (tests, packaged layouts);
 * 2. beside the running bundle — dist/caesar.js and dist/extension.js share one folder;
 * 3. the dist/ folder of the package that contains this source file (running from TypeScript, e.g. under mocha).
 */
export function locateDistFile(name: string, envVar: TestSwitch, env: NodeJS.ProcessEnv = process.env): string {
  const override = testSwitch(envVar, env);
  if (override) {
    if (!existsSync(override)) throw new Error(`${testSwitchName(envVar) ?? envVar} points to ${override}, which does not exist.`);
    return path.resolve(override);
  }
  const beside = path.join(__dirname, name);
  if (existsSync(beside)) return beside;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', name);
    if (existsSync(candidate) && isCaesarPackage(dir)) return candidate;
    if (path.dirname(dir) === dir) break;
  }
  throw new Error(`Cannot find ${name}: run \`npm run build\` (it is produced in dist/).`);
}

function isCaesarPackage(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
    return Boolean(pkg.bin?.caesar);
  } catch {
    return false;
  }
}
