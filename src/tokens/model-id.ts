/** The tokenizer family a model belongs to; it sets the default factor, overheads and safety margin. */
export type ModelFamily = 'openai' | 'anthropic' | 'google' | 'other';

/** Lower-cases the id, strips provider prefixes and writes Claude versions with dashes (`4.5` → `4-5`). */
export function normalizeModelId(modelId: string): string {
  let id = modelId.trim().toLowerCase();
  const claude = id.indexOf('claude-');
  const gemini = id.indexOf('gemini-');
  if (claude >= 0) id = id.slice(claude).replace(/(\d)\.(\d)/g, '$1-$2');
  else if (gemini >= 0) id = id.slice(gemini);
  else {
    // A Bedrock-style version suffix (`…-v1:0`) is not a provider prefix: drop it before cutting `provider:`/`…/`.
    id = id.replace(/:\d+$/, '');
    id = id.slice(Math.max(id.lastIndexOf('/'), id.lastIndexOf(':')) + 1);
  }
  return id;
}

/**
 * The tokenizer family of a model, from its normalised id or else from the provider that serves it (an AI SDK
 * model's `provider`, e.g. `openai.chat`, `azure.responses`, `anthropic.messages`, `google.vertex.chat`, or the
 * prefix of an id such as `anthropic:…`); `undefined` when neither says.
 */
export function familyOf(normalizedId: string, provider: string | undefined): ModelFamily | undefined {
  if (/^(gpt-|o\d|chatgpt-)/.test(normalizedId)) return 'openai';
  if (normalizedId.startsWith('claude-')) return 'anthropic';
  if (normalizedId.startsWith('gemini-')) return 'google';
  const name = provider?.trim().toLowerCase() ?? '';
  if (/(^|[.])anthropic([.]|$)/.test(name)) return 'anthropic';
  if (/^(openai|azure|azure-openai)([.]|$)/.test(name)) return 'openai';
  if (/^(google|vertex)([.]|$)/.test(name)) return 'google';
  return undefined;
}

/** The provider named at the start of an id such as `anthropic:claude-…` or `openai/gpt-4o`, if any. */
export function providerPrefixOf(modelId: string): string | undefined {
  const match = /^([a-z][\w.-]*)[:/]/i.exec(modelId.trim());
  return match?.[1];
}
