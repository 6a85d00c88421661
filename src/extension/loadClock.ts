/**
 * Imported first by extension.ts, so this runs before the rest of the bundle is evaluated: the activation figure
 * then covers loading the extension's code (zod, the engine) as well as activate() itself.
 */
export const loadStartedAt = Date.now();
