import { strict as assert } from 'node:assert';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { jsonSchemaOf, strictReportSchema, type JsonSchema } from '../../../src/protocol';
import { SPEC_EVENTS, SPEC_REPORT, SPEC_TASK } from './fixtures';

function compiler() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/** Every object node of a schema, at every depth. */
function objectNodes(node: unknown, out: JsonSchema[] = []): JsonSchema[] {
  if (Array.isArray(node)) node.forEach((n) => objectNodes(n, out));
  else if (node && typeof node === 'object') {
    const schema = node as JsonSchema;
    if (schema.type === 'object') out.push(schema);
    Object.values(schema).forEach((v) => objectNodes(v, out));
  }
  return out;
}

describe('protocol: JSON Schema export', () => {
  it('publishes draft 2020-12 schemas that accept the spec examples', () => {
    const ajv = compiler();
    for (const [name, sample] of [['task', SPEC_TASK], ['report', SPEC_REPORT], ['event', SPEC_EVENTS[1]]] as const) {
      const schema = jsonSchemaOf(name);
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      const validate = ajv.compile(schema);
      assert.ok(validate(sample), `${name}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('requires only protocol, status and summary in the report schema', () => {
    assert.deepEqual([...(jsonSchemaOf('report').required as string[])].sort(), ['protocol', 'status', 'summary']);
  });

  it('requires the eleven task keys', () => {
    assert.deepEqual(
      [...(jsonSchemaOf('task').required as string[])].sort(),
      ['agent', 'created_at', 'deadline_ms', 'events_path', 'id', 'isolation', 'mode', 'objective', 'protocol', 'report_path', 'workspace'],
    );
  });

  it('exports the event schema as a oneOf of the ten variants', () => {
    const schema = jsonSchemaOf('event');
    assert.equal((schema.oneOf as unknown[]).length, 10);
    const validate = compiler().compile(schema);
    for (const event of SPEC_EVENTS) assert.ok(validate(event), JSON.stringify(validate.errors));
    assert.equal(validate({ ...SPEC_EVENTS[0], type: 'nope' }), false);
  });

  describe('strict report variant', () => {
    const strict = strictReportSchema();

    it('closes every object and requires all its properties, at every depth', () => {
      const nodes = objectNodes(strict);
      assert.equal(nodes.length, 7, 'report, changes, commands_run, findings, questions, artifacts, usage');
      for (const node of nodes) {
        assert.equal(node.additionalProperties, false);
        assert.deepEqual([...(node.required as string[])].sort(), Object.keys(node.properties as object).sort());
      }
    });

    it('makes optional fields without a default nullable, and keeps defaulted ones non-nullable', () => {
      const props = strict.properties as Record<string, JsonSchema>;
      assert.ok(JSON.stringify(props.usage).includes('"type":"null"'));
      const finding = (props.findings!.items as JsonSchema).properties as Record<string, JsonSchema>;
      assert.ok(JSON.stringify(finding.file).includes('"type":"null"'));
      assert.ok(JSON.stringify(finding.line).includes('"type":"null"'));
      assert.ok(!JSON.stringify(props.details).includes('"type":"null"'));
      assert.ok(!JSON.stringify(props.summary).includes('"type":"null"'));
    });

    it('accepts a full strict answer and rejects an extra key', () => {
      const validate = compiler().compile(strict);
      const full = {
        ...SPEC_REPORT,
        commands_run: [{ command: 'pnpm test', exit_code: 0, note: '' }],
        findings: [{ severity: 'medium', title: 't', file: null, line: null, detail: '' }],
        usage: { input_tokens: 1, output_tokens: 2, duration_ms: 3, cost_usd: null },
      };
      assert.ok(validate(full), JSON.stringify(validate.errors));
      assert.equal(validate({ ...full, extra: true }), false);
      assert.equal(validate({ ...full, usage: { ...full.usage, surprise: 1 } }), false);
      const { details: _omitted, ...missingOne } = full;
      assert.equal(validate(missingOne), false, 'strict mode requires every property');
    });
  });
});
