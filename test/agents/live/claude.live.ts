import { defineLiveSuite } from './live-suite';

// claude: see src/agents/claude.ts for what this proves and what stays unverified.
defineLiveSuite('claude', { tokens: true, cost: true });
