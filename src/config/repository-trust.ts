import { layerFiles, readLayer } from './layer-files';
import { describePrograms, namesPrograms, programsOf } from './programs';
import { configDigest, isTrusted, recordTrust } from './trust';

/** One repository config file newly recorded as trusted, and what that allows. */
export interface RecordedTrust {
  file: string;
  sha256: string;
  allows: string[];
}

/**
 * Records as trusted, in the user's trust store, every repository config file of `root` that names programs and is
 * not trusted in its present content. The editor calls it when VS Code trusts the folder, so that `caesar` in a
 * terminal and the MCP server agree with the editor; it returns what it recorded, for the editor to say.
 */
export async function trustRepositoryConfig(root: string, home: string, by: string): Promise<RecordedTrust[]> {
  const files = layerFiles(root, home);
  const recorded: RecordedTrust[] = [];
  for (const scope of ['project', 'local'] as const) {
    const layer = await readLayer(scope, files[scope]!);
    if (!layer) continue;
    const programs = await programsOf(layer.data, root);
    if (!namesPrograms(programs) || (await isTrusted(home, layer.file, layer.text))) continue;
    await recordTrust(home, layer.file, layer.text, by);
    recorded.push({ file: layer.file, sha256: configDigest(layer.text), allows: describePrograms(programs) });
  }
  return recorded;
}
