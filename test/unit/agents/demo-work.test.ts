import { strict as assert } from 'node:assert';
import * as vm from 'node:vm';
import { editedText, faultsEnabled, noteFor, questionFor, syntaxOf, targetFile } from '../../../src/agents/demo/demo-work';

/** The demo agent's pure decisions: which file, what text (valid for its language), which question, the fault switch. */
describe('agents/demo: what the demo agent writes and asks', () => {
  const followUpContext = 'This task continues task t_1. Its work is already in your working directory; build on it.\n\n---\n\nThe objective of task t_1 was:\nAdd a greeting to hello.js\n\nmore';

  it('a JavaScript file gets a comment that compiles, even when the objective carries a comment terminator', () => {
    const text = editedText('hello.js', "console.log('hi');\n", noteFor({ objective: 'Add a greeting to hello.js */ alert(1) /*' }))!;
    assert.doesNotThrow(() => new vm.Script(text), text);
    assert.match(text, /^console\.log\('hi'\);\n\/\/ Add a greeting to hello\.js/);
    const fresh = editedText('src.ts', null, 'note')!;
    assert.equal(fresh, '// Written by the Caesar demo agent\n\n// note\n');
  });

  it('each language its own syntax: Markdown bullet, # for Python and YAML, block comments for CSS and HTML, a key for JSON', () => {
    assert.equal(editedText('NOTES.md', null, 'x'), '# Written by the Caesar demo agent\n\n- x\n');
    assert.equal(editedText('a.py', 'print(1)', 'x'), 'print(1)\n# x\n');
    assert.equal(editedText('a.yml', '', 'x'), '# x\n');
    assert.equal(editedText('a.css', 'a{}\n', 'x */ b{}'), 'a{}\n/* x * / b{} */\n');
    assert.equal(editedText('a.html', '<p></p>\n', 'x --> <script>'), '<p></p>\n<!-- x -- > <script> -->\n');
    assert.deepEqual(JSON.parse(editedText('a.json', '{"a":1}', 'x')!), { a: 1, caesar_demo: 'Written by the Caesar demo agent: x' });
    assert.equal(editedText('a.json', '[1]', 'x'), undefined, 'no valid note in a JSON array');
    assert.equal(editedText('a.json', '{oops', 'x'), undefined);
    assert.deepEqual(syntaxOf('notes.txt'), { kind: 'plain' });
  });

  it('a follow-up edits the file of the task it continues and rewrites its earlier note in place', () => {
    assert.equal(targetFile('make it a proper JavaScript comment', followUpContext), 'hello.js');
    assert.equal(targetFile('now write OTHER.md', followUpContext), 'OTHER.md');
    assert.equal(targetFile('make it nicer'), 'CAESAR_DEMO.md');
    const note = noteFor({ objective: 'make it a proper JavaScript comment', context: followUpContext });
    assert.equal(note, 'Add a greeting to hello.js (revised: make it a proper JavaScript comment)');
    // What an older demo left in hello.js: a Markdown line. The follow-up replaces it with a comment.
    const before = "console.log('hi');\n- 2026-01-01T00:00:00.000Z — Add a greeting to hello.js\n";
    const after = editedText('hello.js', before, note, 'Add a greeting to hello.js')!;
    assert.equal(after, "console.log('hi');\n// Add a greeting to hello.js (revised: make it a proper JavaScript comment)\n");
    assert.doesNotThrow(() => new vm.Script(after));
  });

  it('asks a question that fits the objective', () => {
    assert.deepEqual(questionFor({ objective: 'ask me, then add a greeting to hello.js', mode: 'write' }).options, ['Hello', 'Bonjour', 'Ciao']);
    const other = questionFor({ objective: 'Ask before you document the parser in PARSER.md', mode: 'write' });
    assert.match(other.question, /^For "Ask before you document the parser in PARSER\.md": should the note I add to PARSER\.md be brief or detailed\?$/);
    assert.doesNotMatch(other.question, /greeting/i);
    assert.match(questionFor({ objective: 'question: what is in here?', mode: 'read-only' }).question, /look at/);
  });

  it('the fault modes need CAESAR_DEMO_FAULTS=1', () => {
    assert.equal(faultsEnabled({}), false);
    assert.equal(faultsEnabled({ CAESAR_DEMO_FAULTS: 'true' }), false);
    assert.equal(faultsEnabled({ CAESAR_DEMO_FAULTS: '1' }), true);
  });
});
