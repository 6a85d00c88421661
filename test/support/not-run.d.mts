export interface NotRun {
  title: string;
  reason: string;
}
export const NOT_RUN_CODE: number;
export const REPORT_VARIABLE: string;
export function missingPackageReason(names: string | string[], what?: string): string;
export function refusedUnderCi(reason: string): string;
export function writeReport(report: { ran: number; notRun: NotRun[]; wholeSuite?: boolean }, env?: NodeJS.ProcessEnv): void;
export function suiteNotRun(reason: string, env?: NodeJS.ProcessEnv): never;
export function byReason(notRun: NotRun[]): { reason: string; titles: string[] }[];
export function notRunLines(notRun: NotRun[]): string[];
