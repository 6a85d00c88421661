export const BUILD_INPUTS: string[];
export const CLI_OUTPUTS: string[];
export function newestInput(root: string, inputs?: string[]): { file: string; mtimeMs: number } | undefined;
export function staleDistReason(root: string, outputs?: string[], inputs?: string[]): string | undefined;
export function ensureFreshDist(root: string, options?: { rebuild?: boolean; outputs?: string[]; inputs?: string[] }): 'fresh' | 'rebuilt';
