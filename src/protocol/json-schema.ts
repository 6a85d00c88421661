import { z } from './zod';
import { EventSchema } from './event';
import { ReportSchema } from './report';
import { TaskSchema } from './task';

export type JsonSchema = Record<string, unknown>;
export const SCHEMA_NAMES = ['task', 'report', 'event'] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

const SOURCES = { task: TaskSchema, report: ReportSchema, event: EventSchema } as const;

/**
 * JSON Schema (draft 2020-12) of a document, generated from the zod schema in *input* mode, so fields that have a
 * default are optional — what a writer must provide, not what a reader ends up with.
 */
export function jsonSchemaOf(name: SchemaName): JsonSchema {
  const schema = z.toJSONSchema(SOURCES[name], { target: 'draft-2020-12', io: 'input' }) as JsonSchema;
  schema.$id = `https://caesar.dev/schemas/${name}.v1.json`;
  schema.title = `caesar.${name}/v1`;
  return schema;
}

/**
 * The strict report variant for native structured outputs (codex --output-schema, claude --json-schema): every object
 * gets `additionalProperties: false` and lists all its properties as required; a property that was optional and had
 * no default becomes nullable (`anyOf [original, null]`), since strict mode cannot express "absent". Readers drop
 * nulls before validation, so a strict answer reads back as an ordinary report.
 */
export function strictReportSchema(): JsonSchema {
  const schema = strictify(jsonSchemaOf('report'));
  schema.$id = 'https://caesar.dev/schemas/report.v1.strict.json';
  return schema;
}

function strictify(node: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...node };
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(out[key])) out[key] = (out[key] as JsonSchema[]).map(strictify);
  }
  if (isSchema(out.items)) out.items = strictify(out.items);
  if (out.type === 'object' && isSchema(out.properties)) {
    const required = new Set((out.required as string[] | undefined) ?? []);
    const properties: Record<string, JsonSchema> = {};
    for (const [name, prop] of Object.entries(out.properties as Record<string, JsonSchema>)) {
      const inner = strictify(prop);
      const wasOptionalWithoutDefault = !required.has(name) && !('default' in prop);
      properties[name] = wasOptionalWithoutDefault && !allowsNull(inner) ? { anyOf: [inner, { type: 'null' }] } : inner;
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowsNull(schema: JsonSchema): boolean {
  return Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some((s) => s.type === 'null');
}
