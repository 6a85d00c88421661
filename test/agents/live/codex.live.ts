import { defineLiveSuite } from './live-suite';

// codex: see src/agents/codex.ts for what this proves and what stays unverified.
defineLiveSuite('codex', { tokens: true, cost: false });
