import * as path from 'node:path';
import { LaunchSpecSchema, taskPaths, type LaunchSpec } from '../../protocol';
import { readJsonFile } from './atomic';
import { writeJsonAtomic } from '../../base/atomic';

export const DEFAULT_MAX_PARALLEL = 4;
export const DEFAULT_TIMEOUT_MS = 600_000;

export async function readLaunchSpec(root: string, id: string): Promise<LaunchSpec> {
  const file = launchPath(root, id);
  const spec = await readJsonFile(file, LaunchSpecSchema);
  if (!spec) throw new Error(`Task ${id} has no launch.json (${file})`);
  return spec;
}

export async function writeLaunchSpec(root: string, spec: LaunchSpec): Promise<void> {
  await writeJsonAtomic(launchPath(root, spec.id), spec);
}

export function launchPath(root: string, id: string): string {
  return path.join(taskPaths(root, id).dir, 'launch.json');
}
