import { defineLiveSuite } from './live-suite';

// copilot: see src/agents/copilot.ts for what this proves and what stays unverified.
defineLiveSuite('copilot', { tokens: false, cost: false });
