import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/**
 * A fake `dpkg-query` and `apt-get` (and `sudo`) in a temp folder to put first on PATH: dpkg-query says installed every
 * package but those in `missing`; apt-get records each call (with DEBIAN_FRONTEND) and `install` clears the missing
 * list, as a real install would. Nothing on the machine is installed or removed.
 */
export function fakeApt(missing: string[], { sudoWorks = false } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-fake-apt-'));
  const missingFile = path.join(dir, 'missing');
  const log = path.join(dir, 'apt.log');
  writeFileSync(missingFile, missing.map((m) => `${m}\n`).join(''));
  const tool = (name: string, body: string) => {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  };
  // `dpkg-query -W -f FORMAT name…`: one "name ii " line per installed package, as the real one prints.
  // Shell builtins only: a test may give it a PATH without grep.
  tool('dpkg-query', `shift 3\nfor p in "$@"; do\n  gone=\n  while read -r m; do [ "$m" = "$p" ] && gone=1; done < '${missingFile}'\n  if [ -n "$gone" ]; then echo "dpkg-query: no packages found matching $p" >&2; else echo "$p ii "; fi\ndone`);
  tool('apt-get', `echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >> '${log}'\nif [ "$1" = install ]; then : > '${missingFile}'; fi`);
  tool('sudo', sudoWorks ? `[ "$1" = -n ] && shift\necho "sudo $*" >> '${log}'\nexec "$@"` : 'echo "sudo: a password is required" >&2\nexit 1');
  return {
    dir,
    /** Makes this a machine without apt-get (dpkg-query stays). */
    removeAptGet: () => rmSync(path.join(dir, 'apt-get')),
    env: { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
    calls: (): string[] => {
      try {
        return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
