export interface SystemPackage {
  name: string;
  probe: string;
  uses: string[];
  why: string;
}
export const SYSTEM_PACKAGES: SystemPackage[];
export function packagesFor(uses?: string[]): SystemPackage[];
export function missingPackages(packages: SystemPackage[], env?: NodeJS.ProcessEnv): SystemPackage[];
export function installRights(env?: NodeJS.ProcessEnv, uid?: number): { can: true; prefix: string[] } | { can: false; why: string };
export function installCommand(missing: SystemPackage[], asRoot: boolean): string;
export function explainMissing(missing: SystemPackage[]): string;
export function ensureSystemPackages(uses: string[], options?: { env?: NodeJS.ProcessEnv; uid?: number; log?: (line: string) => void }): string[];
