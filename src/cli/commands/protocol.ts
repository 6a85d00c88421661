import type { Command } from 'commander';
import { SCHEMA_NAMES, jsonSchemaOf, strictReportSchema, type SchemaName } from '../../protocol';
import { UsageError, printJson, type CliIo } from '../io';

/** `caesar protocol schema [task|report|event] [--strict]` — the executable schemas of OACP v1. */
export function registerProtocol(program: Command, io: CliIo): void {
  const protocol = program.command('protocol').description('The OACP v1 contract: print its JSON Schemas');
  protocol
    .command('schema')
    .description('Print the JSON Schema (draft 2020-12) of a document; without a name, list the documents')
    .argument('[name]', `one of ${SCHEMA_NAMES.join(', ')}`)
    .option('--strict', 'the strict report variant for native structured outputs (report only)')
    .action((name: string | undefined, opts: { strict?: boolean }) => {
      if (name === undefined) {
        if (opts.strict) throw new UsageError('--strict needs a document name: caesar protocol schema report --strict');
        io.out(SCHEMA_NAMES.map((n) => `${n}\tcaesar.${n}/v1`).join('\n'));
        return;
      }
      if (!(SCHEMA_NAMES as readonly string[]).includes(name)) {
        throw new UsageError(`Unknown document "${name}": expected one of ${SCHEMA_NAMES.join(', ')}.`);
      }
      if (opts.strict && name !== 'report') {
        throw new UsageError('--strict exists only for the report schema (it is meant for native structured outputs).');
      }
      printJson(io, opts.strict ? strictReportSchema() : jsonSchemaOf(name as SchemaName));
    });
}
