/** The shape every Workers AI transport gives its callers (runner.ts picks one, rest.ts is one). */
export interface AiRunOptions {
  signal?: AbortSignal;
}

/** What every AI call site needs: the binding's `run`, structurally. */
export interface AiRunner {
  run(model: string, input: object, options?: AiRunOptions): Promise<unknown>;
}
