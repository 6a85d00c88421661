import { defineLiveSuite } from './live-suite';

// opencode: see src/agents/opencode.ts for what this proves and what stays unverified.
defineLiveSuite('opencode', { tokens: true, cost: true });
