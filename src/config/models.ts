/** Model resolution (reference §4.5.9): explicit > role > [models] > none. */

export type ModelSource = 'explicit' | 'role' | 'models' | 'none';

export interface ModelInputs {
  agent: string;
  agentAcceptsModel: boolean;
  explicit?: string;
  role?: { name: string; model?: string };
  models: Record<string, string>;
}

export type ModelDecision =
  | { model?: string; source: ModelSource; dropped?: { model: string; source: Exclude<ModelSource, 'explicit' | 'none'>; detail: string } }
  | { refused: string };

export function resolveModel(input: ModelInputs): ModelDecision {
  const explicit = input.explicit?.trim() ? input.explicit.trim() : undefined;
  if (explicit !== undefined) {
    if (!input.agentAcceptsModel) {
      return { refused: `Agent "${input.agent}" cannot be given a model, so --model ${explicit} cannot be honoured. Drop the model or pick another agent.` };
    }
    return { model: explicit, source: 'explicit' };
  }
  const fromRole = input.role?.model;
  const fromModels = input.models[input.agent];
  const derived = fromRole !== undefined ? { model: fromRole, source: 'role' as const } : fromModels !== undefined ? { model: fromModels, source: 'models' as const } : undefined;
  if (!derived) return { source: 'none' };
  if (input.agentAcceptsModel) return derived;
  // A configured model is advice: dropping it beats refusing a delegation the caller did not phrase that way.
  const where = derived.source === 'role' ? `role "${input.role?.name}"` : `[models] ${input.agent}`;
  return {
    source: 'none',
    dropped: {
      ...derived,
      detail: `The model "${derived.model}" (from ${where}) was not applied: agent "${input.agent}" cannot be given a model.`,
    },
  };
}
