/**
 * The provider that serves model names `models` does not list: the one
 * configured as the default (`defaultProvider`, `openai` unless set) when it
 * exists, else the Anthropic provider, else the Gemini one, else the only
 * provider there is. Null when several are configured and none of these
 * holds: such names are then refused (`model_not_found`), and start-up warns.
 */
export function effectiveDefaultProvider(defaultProvider: string | null | undefined, providers: Readonly<Record<string, unknown>>): string | null {
  if (defaultProvider && Object.hasOwn(providers, defaultProvider)) return defaultProvider;
  const entries = Object.entries(providers);
  const ofType = (type: string) => entries.find(([, provider]) => (provider as { type?: unknown } | null)?.type === type)?.[0] ?? null;
  return ofType('anthropic') ?? ofType('gemini') ?? (entries.length === 1 ? entries[0]![0] : null);
}
