import type { Command } from 'commander';
import {
  configDigest,
  describePrograms,
  layerFiles,
  namesPrograms,
  programsOf,
  readLayer,
  recordTrust,
  revokeTrust,
  trustEntryOf,
  trustStorePath,
  type LayerPrograms,
  type LoadedLayer,
} from '../../config';
import { printJson, type CliIo } from '../io';
import { type CommonOptions, configAction, contextOf, load, withCommon, type Context } from './config-common';

interface TrustOptions extends CommonOptions {
  revoke?: boolean;
  show?: boolean;
}

/** What one repository file is and allows, and what the store says of it. */
interface FileTrust {
  scope: 'project' | 'local';
  file: string;
  sha256: string;
  names_programs: boolean;
  allows: string[];
  programs: LayerPrograms;
  /** trusted = this content is recorded; changed = another content was; untrusted = nothing recorded. */
  status: 'trusted' | 'changed' | 'untrusted' | 'not-needed';
}

/**
 * `caesar trust [--show] [--revoke]`: the CLI's and the MCP server's Workspace Trust. It shows what each repository
 * config file would allow (agents and their programs, setup commands, copy/link from outside the repository, prompt
 * files outside .caesar/), then records the SHA-256 of exactly that content in the user's own trust store. A file
 * naming no program needs no trust and is not recorded.
 */
export function registerTrust(program: Command, io: CliIo): void {
  withCommon(program.command('trust'), false)
    .description("Trust this repository's .caesar configuration (the programs it names) after showing what it allows")
    .option('--show', 'only show what each file allows and whether it is trusted; record nothing')
    .option('--revoke', 'forget the trust recorded for this repository')
    .action(configAction(async (opts: TrustOptions) => trust(contextOf(io, opts), opts)));
}

async function trust(ctx: Context, opts: TrustOptions): Promise<void> {
  const files = await repositoryFiles(ctx);
  if (opts.revoke) return revoke(ctx, files);
  const recorded: string[] = [];
  if (!opts.show) {
    for (const file of files) {
      if (!file.layer || file.status === 'not-needed' || file.status === 'trusted') continue;
      // The digest is of the very text shown below: a change between showing and recording cannot slip in.
      await recordTrust(ctx.home, file.layer.file, file.layer.text, 'caesar trust');
      file.status = 'trusted';
      recorded.push(file.layer.file);
    }
  }
  const loaded = await load(ctx);
  const rows = files.map(({ layer: _layer, ...rest }) => rest);
  if (ctx.json) {
    printJson(ctx.io, { root: ctx.root, store: trustStorePath(ctx.home), files: rows, recorded, policy_notes: loaded.notes.map((n) => n.message) });
    return;
  }
  if (!rows.length) ctx.io.out(`No repository configuration here (${layerFiles(ctx.root, ctx.home).project}): nothing to trust.`);
  for (const row of rows) printRow(ctx, row);
  if (loaded.notes.length) {
    ctx.io.out('\nThe repository asks to loosen your policy; that is never taken from it, trusted or not:');
    for (const note of loaded.notes) ctx.io.out(`  - ${note.message}`);
  }
  if (recorded.length) ctx.io.out(`\nTrusted (recorded in ${trustStorePath(ctx.home)}): ${recorded.join(', ')}. Any change to ${recorded.length > 1 ? 'these files' : 'this file'} asks again.`);
  else if (opts.show && rows.some((r) => r.status === 'untrusted' || r.status === 'changed')) ctx.io.out('\nNothing recorded (--show). Run caesar trust to trust what is shown.');
}

async function repositoryFiles(ctx: Context): Promise<Array<FileTrust & { layer?: LoadedLayer }>> {
  const files = layerFiles(ctx.root, ctx.home);
  const out: Array<FileTrust & { layer?: LoadedLayer }> = [];
  for (const scope of ['project', 'local'] as const) {
    const layer = await readLayer(scope, files[scope]!);
    if (!layer) continue;
    const programs = await programsOf(layer.data, ctx.root);
    const sha256 = configDigest(layer.text);
    const entry = await trustEntryOf(ctx.home, layer.file);
    const names = namesPrograms(programs);
    const status = !names ? 'not-needed' : entry?.sha256 === sha256 ? 'trusted' : entry ? 'changed' : 'untrusted';
    out.push({ scope, file: layer.file, sha256, names_programs: names, allows: describePrograms(programs), programs, status, layer });
  }
  return out;
}

function printRow(ctx: Context, row: FileTrust): void {
  const status: Record<FileTrust['status'], string> = {
    trusted: 'trusted',
    changed: 'NOT trusted: it changed since you trusted it',
    untrusted: 'NOT trusted',
    'not-needed': 'names no program: needs no trust',
  };
  ctx.io.out(`${row.file} (${row.scope}, sha256 ${row.sha256}): ${status[row.status]}`);
  for (const line of row.allows) ctx.io.out(`  - ${line}`);
}

async function revoke(ctx: Context, files: Array<FileTrust & { layer?: LoadedLayer }>): Promise<void> {
  const scopes = layerFiles(ctx.root, ctx.home);
  const revoked: string[] = [];
  // Both names, present or not: a file deleted since it was trusted is forgotten too.
  for (const file of [scopes.project!, scopes.local!]) if (await revokeTrust(ctx.home, file)) revoked.push(file);
  if (ctx.json) {
    printJson(ctx.io, { root: ctx.root, store: trustStorePath(ctx.home), revoked, files: files.map(({ layer: _layer, ...rest }) => rest) });
    return;
  }
  ctx.io.out(revoked.length ? `No longer trusted: ${revoked.join(', ')}.` : 'Nothing was trusted here.');
}
