import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UnsafeFileError } from '../../src/base/safe-read';
import { concludeLostTasks } from '../../src/engine/run/conclude';
import { EventsWriter } from '../../src/engine/run/events-writer';
import { layDownFiles } from '../../src/engine/run/lay-down';
import { runAgentProcess } from '../../src/engine/process/spawn';
import { WriteFault } from '../../src/engine/process/write-fault';
import { readJsonFile } from '../../src/engine/store/atomic';
import { bindingOf, sealDocument } from '../../src/engine/store/record-seal';
import { ACTIVE_STATUSES, TaskStateSchema, taskPaths } from '../../src/protocol';
import { buildCli, makeRepo, pidAlive, waitFor } from '../engine/runtime/helpers';
import { startHostile } from './helpers';

/*
 * Issue 13, items 1–2 (the writers): a symlink, a FIFO, a huge file or a symlinked folder planted where the
 * supervisor writes — the files an adapter lays down (and restores), events.jsonl, raw.log, and gc's closing event.
 * Nothing may hang, nothing may be written (or removed) through a link, and the task always concludes.
 */

function scratch(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `caesar-planted-${label}-`));
}

/** A file outside the tree a link points at, with content that must survive. */
function outsideFile(): string {
  const file = path.join(scratch('outside'), 'precious.txt');
  writeFileSync(file, 'precious\n');
  return file;
}

/** `work`, or a failure naming `what` after `ms` (a blocked open would otherwise hang the test). */
async function promptly<T>(what: string, work: () => Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} had not returned after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens both ends of a FIFO without blocking, which releases a writer or reader stuck in its open (cleanup). */
function unblockFifo(fifo: string): void {
  for (const end of [constants.O_RDONLY, constants.O_WRONLY]) {
    try {
      closeSync(openSync(fifo, end | constants.O_NONBLOCK));
    } catch {
      /* nobody waiting at that end, or not a FIFO any more */
    }
  }
}

const CONFIG = '{"mcpServers":{}}\n';

describe('reliability: laid-down files never read, write or remove through what was planted', function () {
  this.timeout(30_000);

  it('a symlink to a file outside the tree at a restored path: replaced while the agent runs, put back as the link', async () => {
    const root = scratch('root');
    const outside = outsideFile();
    const file = path.join(root, 'agent-config.json');
    symlinkSync(outside, file);
    const restore = await layDownFiles([{ path: file, content: CONFIG, restore: true }], [root]);
    assert.equal(readFileSync(outside, 'utf8'), 'precious\n', 'nothing written through the link');
    assert.ok(lstatSync(file).isFile());
    assert.equal(readFileSync(file, 'utf8'), CONFIG);
    await restore();
    assert.equal(readlinkSync(file), outside, 'the link is back, as a link');
    assert.equal(readFileSync(outside, 'utf8'), 'precious\n');
  });

  it('a symlink to /dev/zero at a restored path: nothing is read', async () => {
    const root = scratch('root');
    const file = path.join(root, 'agent-config.json');
    symlinkSync('/dev/zero', file);
    const restore = await promptly('layDownFiles', () => layDownFiles([{ path: file, content: CONFIG, restore: true }], [root]));
    assert.equal(readFileSync(file, 'utf8'), CONFIG);
    await restore();
    assert.equal(readlinkSync(file), '/dev/zero');
  });

  it('a FIFO at a restored path: no hang; the FIFO is back afterwards', async () => {
    const root = scratch('root');
    const file = path.join(root, 'agent-config.json');
    execFileSync('mkfifo', [file]);
    try {
      const restore = await promptly('layDownFiles', () => layDownFiles([{ path: file, content: CONFIG, restore: true }], [root]));
      assert.equal(readFileSync(file, 'utf8'), CONFIG);
      await restore();
      assert.ok(lstatSync(file).isFIFO());
    } finally {
      unblockFifo(file);
    }
  });

  it('a 3 GiB (sparse) file at a restored path: put back whole, never read, never removed', async () => {
    const root = scratch('root');
    const file = path.join(root, 'AGENTS.md');
    writeFileSync(file, '');
    truncateSync(file, 3 * 1024 ** 3);
    const inode = statSync(file).ino;
    const restore = await promptly('layDownFiles', () => layDownFiles([{ path: file, content: CONFIG, restore: true }], [root]));
    assert.equal(readFileSync(file, 'utf8'), CONFIG);
    await restore();
    assert.equal(statSync(file).size, 3 * 1024 ** 3, 'the user file is back');
    assert.equal(statSync(file).ino, inode, 'the very same file');
  });

  it('a symlinked folder on the way: refused, nothing written outside', async () => {
    const root = scratch('root');
    const outsideDir = scratch('outside-dir');
    symlinkSync(outsideDir, path.join(root, '.agent'));
    await assert.rejects(
      layDownFiles([{ path: path.join(root, '.agent', 'settings.json'), content: CONFIG, restore: true }], [root]),
      (err: unknown) => err instanceof UnsafeFileError && err.code === 'ESYMLINK',
    );
    assert.deepEqual(readdirSync(outsideDir), []);
  });

  it('the agent swaps the folder for a symlink while it runs: the restore is skipped, the outside file kept', async () => {
    const root = scratch('root');
    const outsideDir = scratch('outside-dir');
    writeFileSync(path.join(outsideDir, 'settings.json'), 'precious\n');
    const file = path.join(root, '.agent', 'settings.json');
    const logged: string[] = [];
    const restore = await layDownFiles([{ path: file, content: CONFIG, restore: true }], [root], (m) => logged.push(m));
    renameSync(path.join(root, '.agent'), path.join(root, '.agent-moved'));
    symlinkSync(outsideDir, path.join(root, '.agent'));
    await restore();
    assert.equal(readFileSync(path.join(outsideDir, 'settings.json'), 'utf8'), 'precious\n', 'not removed through the link');
    assert.match(logged.join('\n'), /not restoring .*settings\.json: .*\.agent is a symbolic link/);
  });

  it('a path outside the task folder and the workspace: refused', async () => {
    const root = scratch('root');
    const elsewhere = path.join(scratch('elsewhere'), 'config.json');
    await assert.rejects(layDownFiles([{ path: elsewhere, content: CONFIG }], [root]), /outside the task folder and the workspace/);
    assert.equal(existsSync(elsewhere), false);
  });

  it('a refusal half-way puts back the files already laid down', async () => {
    const root = scratch('root');
    const first = path.join(root, 'first.json');
    writeFileSync(first, 'original\n');
    symlinkSync(scratch('outside-dir'), path.join(root, 'linked'));
    await assert.rejects(
      layDownFiles(
        [
          { path: first, content: CONFIG, restore: true },
          { path: path.join(root, 'linked', 'second.json'), content: CONFIG, restore: true },
        ],
        [root],
      ),
      UnsafeFileError,
    );
    assert.equal(readFileSync(first, 'utf8'), 'original\n');
    assert.deepEqual(readdirSync(root).sort(), ['first.json', 'linked'], 'no temp or aside file left');
  });
});

describe('reliability: events.jsonl, raw.log and gc never write through what was planted', function () {
  this.timeout(30_000);

  for (const { name, plant, kind } of [
    { name: 'a symlink to a file outside', plant: (file: string) => symlinkSync(outsideFile(), file), kind: 'a symbolic link' },
    { name: 'a dangling symlink to a path outside', plant: (file: string) => symlinkSync(path.join(scratch('outside'), 'created'), file), kind: 'a symbolic link' },
    { name: 'a directory', plant: (file: string) => mkdirSync(file), kind: 'a directory' },
    { name: 'a FIFO with a reader', plant: (file: string) => execFileSync('mkfifo', [file]), kind: 'a FIFO', reader: true },
    { name: 'a FIFO', plant: (file: string) => execFileSync('mkfifo', [file]), kind: 'a FIFO' },
  ]) {
    it(`the events writer refuses ${name} at events.jsonl: the fault says so, nothing written`, () => {
      const file = path.join(scratch('task'), 'events.jsonl');
      plant(file);
      const target = lstatSync(file).isSymbolicLink() ? readlinkSync(file) : undefined;
      const before = target && existsSync(target) ? readFileSync(target, 'utf8') : undefined;
      const reader = name.endsWith('with a reader') ? openSync(file, constants.O_RDONLY | constants.O_NONBLOCK) : undefined;
      try {
        const fault = new WriteFault();
        const writer = new EventsWriter(file, 't_planted');
        writer.fault = fault;
        assert.deepEqual(writer.appendAll([{ type: 'message', text: 'hello' }]), []);
        assert.equal(fault.reason, `events.jsonl could not be written: events.jsonl is ${kind}, not a regular file`);
        assert.equal(writer.finish({ type: 'finished', status: 'failed', summary: 'x' }), undefined);
        if (target) assert.equal(existsSync(target) ? readFileSync(target, 'utf8') : undefined, before, 'the target is untouched');
      } finally {
        if (reader !== undefined) closeSync(reader);
      }
    });
  }

  it('raw.log as a symlink to a file outside, or a FIFO: the run is refused before the agent starts, nothing written', async () => {
    const outside = outsideFile();
    const linked = path.join(scratch('task'), 'raw.log');
    symlinkSync(outside, linked);
    const fifo = path.join(scratch('task'), 'raw.log');
    execFileSync('mkfifo', [fifo]);
    const marker = path.join(scratch('marker'), 'ran');
    for (const rawLogPath of [linked, fifo]) {
      await assert.rejects(
        promptly('runAgentProcess', async () => runAgentProcess({
          plan: { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`], cwd: tmpdir(), display: 'node' },
          env: process.env,
          rawLogPath,
          onStdoutLines: () => {},
          timeoutMs: 10_000,
          graceMs: 300,
        })),
        /raw\.log is a (symbolic link|FIFO), not a regular file/,
      );
    }
    assert.equal(readFileSync(outside, 'utf8'), 'precious\n');
    assert.equal(existsSync(marker), false, 'the agent never started');
  });

  for (const planted of ['a FIFO', 'a symlink to a file outside']) {
    it(`caesar gc concluding a lost task whose events.jsonl is ${planted}: concludes, no hang, nothing written through`, async () => {
      const root = makeRepo();
      const id = 't_0123456789abcdef0123456789abcdef';
      const paths = taskPaths(root, id);
      mkdirSync(paths.dir, { recursive: true });
      const dead = spawnSync(process.execPath, ['-e', '']).pid;
      // Sealed, as delegate() and the supervisor write it: gc concludes only a task whose state is Caesar's.
      writeFileSync(paths.state, JSON.stringify(sealDocument('state', bindingOf(root, id), TaskStateSchema.parse({
        id, status: 'running', agent: 'demo', objective: 'x', mode: 'write', isolation: 'inplace', network: false, timeout_ms: 60_000,
        depth: 0, created_at: new Date(0).toISOString(), root, workspace: root, supervisor_pid: dead,
      }))));
      const outside = outsideFile();
      if (planted === 'a FIFO') execFileSync('mkfifo', [paths.events]);
      else symlinkSync(outside, paths.events);
      try {
        await promptly('concludeLostTasks', () => concludeLostTasks(root, { dryRun: false }));
        const state = await readJsonFile(paths.state, TaskStateSchema);
        assert.equal(state?.status, 'failed', 'the task is concluded');
        assert.equal(readFileSync(outside, 'utf8'), 'precious\n', 'no closing event written through the link');
      } finally {
        if (planted === 'a FIFO') unblockFifo(paths.events);
      }
    });
  }
});

describe('reliability: a real task whose events.jsonl or raw.log is a FIFO', function () {
  this.timeout(90_000);

  for (const name of ['events.jsonl', 'raw.log']) {
    it(`${name} planted as a FIFO before the supervisor starts: the task fails with the reason, never hangs`, async () => {
      const root = makeRepo();
      const env = {
        CAESAR_SUPERVISOR_JS: path.join(__dirname, 'plant-supervisor.cjs'),
        CAESAR_TEST_REAL_SUPERVISOR: await buildCli(),
        CAESAR_TEST_PLANT_FIFO: name,
      };
      const { id } = await startHostile(root, { mode: 'chatter', count: 20, size: 10 }, { timeout_ms: 60_000 }, env);
      const paths = taskPaths(root, id);
      try {
        const state = await waitFor('a final state', async () => {
          const current = await readJsonFile(paths.state, TaskStateSchema);
          return current && !ACTIVE_STATUSES.includes(current.status) ? current : undefined;
        }, 45_000);
        assert.equal(state.status, 'failed');
        assert.match(state.error ?? '', new RegExp(`${name.replace('.', '\\.')} is a FIFO, not a regular file`));
        await waitFor('the supervisor to exit', () => !pidAlive(state.supervisor_pid!), 30_000);
        assert.ok(lstatSync(path.join(paths.dir, name)).isFIFO(), 'the FIFO is left as it was, never replaced or written');
      } finally {
        unblockFifo(path.join(paths.dir, name));
      }
    });
  }
});
