import { defineLiveSuite } from './live-suite';

// gemini: see src/agents/gemini.ts for what this proves and what stays unverified.
defineLiveSuite('gemini', { tokens: true, cost: false });
