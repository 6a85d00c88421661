/** A narrowing switch: an env var name (any non-empty value narrows), or one whose some values only grow the suite. */
export type NarrowingSwitch = string | { name: string; allowed(value: string): boolean };
export function underCi(env?: NodeJS.ProcessEnv): boolean;
export function narrowingUnderCi(switches: NarrowingSwitch[], env?: NodeJS.ProcessEnv): string[];
export function narrowingArgsUnderCi(args: string[], what: string, env?: NodeJS.ProcessEnv): string[];
export function refusalText(problems: string[]): string;
export function refuseNarrowingUnderCi(
  switches: NarrowingSwitch[],
  options?: { env?: NodeJS.ProcessEnv; args?: string[]; argsWhat?: string },
): void;
export function assertNoNarrowingUnderCi(switches: NarrowingSwitch[], env?: NodeJS.ProcessEnv): void;
export function mochaHonestyFlags(env?: NodeJS.ProcessEnv): string[];
