import { demoAdapter } from './demo';
import { genericAdapter, type GenericAgentDefinition } from './generic';
import { NATIVE_ADAPTERS } from './native';
import type { AgentAdapter } from './types';

/**
 * The agent catalogue: the native adapters, then the built-in demo agent. A `[[agent]]` entry of the configuration
 * with the same id REPLACES the built-in one (reference §2.2.1), so a project can wrap a CLI its own way.
 */
export function builtinAdapters(): AgentAdapter[] {
  return [...NATIVE_ADAPTERS, demoAdapter];
}

export function knownAgentIds(generic: readonly GenericAgentDefinition[] = []): string[] {
  const ids = builtinAdapters().map((a) => a.id);
  for (const def of generic) if (!ids.includes(def.id)) ids.push(def.id);
  return ids;
}

export function findAdapter(id: string, generic: readonly GenericAgentDefinition[] = []): AgentAdapter | undefined {
  const def = generic.find((d) => d.id === id);
  if (def) return genericAdapter(def);
  return builtinAdapters().find((a) => a.id === id);
}

/** The adapter for an agent id, or an error naming the known ids. */
export function resolveAdapter(id: string, generic: readonly GenericAgentDefinition[] = []): AgentAdapter {
  const adapter = findAdapter(id, generic);
  if (!adapter) {
    throw new Error(`Unknown agent "${id}". Known agents: ${knownAgentIds(generic).join(', ')}. Declare others with [[agent]] in .caesar/config.toml.`);
  }
  return adapter;
}

/** Every adapter the configuration makes available: built-ins (replaced by same-id entries), then the other entries. */
export function catalogueAdapters(generic: readonly GenericAgentDefinition[] = []): AgentAdapter[] {
  return knownAgentIds(generic).map((id) => findAdapter(id, generic)!);
}
