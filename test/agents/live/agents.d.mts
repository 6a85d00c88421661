export interface PinnedCli {
  agent: string;
  pkg: string;
  version: string;
}
export const PINNED: PinnedCli[];
export function cacheRoot(): string;
export function installDir(entry: PinnedCli): string;
export function doneMarker(entry: PinnedCli): string;
export function binaryOf(entry: PinnedCli): string | undefined;
