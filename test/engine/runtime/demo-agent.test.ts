import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { continueTask, delegateTask } from '../../../src/engine/tasks';
import { buildCli, makeRepo, waitForFinished } from './helpers';

/**
 * The built-in demo agent as a newcomer meets it (real supervisor, real git, the bundled demo-agent.js): asked to edit
 * a JavaScript file it writes a JavaScript comment, and a follow-up's feedback revises that same file instead of
 * creating CAESAR_DEMO.md.
 */
describe('the demo agent writes valid content and honours a follow-up', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  it('hello.js gets a comment that compiles; "make it a proper JavaScript comment" rewrites that line of hello.js', async () => {
    const repo = makeRepo({ 'README.md': '# test repo\n', 'hello.js': "console.log('hello');\n" });
    const env = { ...process.env, CAESAR_DEMO_DELAY_MS: '0' };
    const first = await delegateTask(repo, { objective: 'Add a greeting to hello.js', agent: 'demo', isolation: 'worktree' }, { env });
    const firstDone = await waitForFinished(repo, first.id);
    assert.equal(firstDone.state.status, 'succeeded', firstDone.state.error);
    const written = readFileSync(path.join(firstDone.state.worktree!, 'hello.js'), 'utf8');
    assert.doesNotThrow(() => new vm.Script(written), written);
    assert.match(written, /^console\.log\('hello'\);\n\/\/ Add a greeting to hello\.js\n$/);

    const next = await continueTask(repo, first.id, 'make it a proper JavaScript comment', { env });
    const done = await waitForFinished(repo, next.id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), ['hello.js'], 'no CAESAR_DEMO.md');
    assert.ok(!existsSync(path.join(done.state.worktree!, 'CAESAR_DEMO.md')));
    const revised = readFileSync(path.join(done.state.worktree!, 'hello.js'), 'utf8');
    assert.equal(revised, "console.log('hello');\n// Add a greeting to hello.js (revised: make it a proper JavaScript comment)\n");
    assert.doesNotThrow(() => new vm.Script(revised));
    assert.match(done.result.report.summary, /revised as asked \("make it a proper JavaScript comment"\)/);
  });
});
