// Models as the AI SDK names them: a model object's `provider` and `modelId` (OpenAI, Azure, Anthropic, Bedrock,
// Google, Vertex, the gateway) resolve to the table's row for the model, and a model the table lacks is refused
// with an error that names it and what to pass; it never gets a generic window.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../src/ai-sdk/context-manager/create-context-manager.js';
import { ModelProfileNotFoundError, modelProfileTable, resolveModelProfile } from '../../src/context/index.js';
import type { ModelProfileEntry } from '../../src/tokens/model-profile.js';
import { storeOf, tokenCounter, user } from '../context/fixtures.js';

type Named = string | { provider: string; modelId: string };

const wrappers: Record<'openai' | 'anthropic' | 'google', Array<(id: string) => Named>> = {
  openai: [
    (id) => ({ provider: 'openai.chat', modelId: id }),
    (id) => ({ provider: 'openai.responses', modelId: id }),
    (id) => ({ provider: 'azure.chat', modelId: id }),
    (id) => ({ provider: 'azure.responses', modelId: id }),
    (id) => ({ provider: 'gateway', modelId: `openai/${id}` }),
    (id) => `openai:${id}`,
    (id) => id,
  ],
  anthropic: [
    (id) => ({ provider: 'anthropic.messages', modelId: id }),
    (id) => ({ provider: 'amazon-bedrock', modelId: `anthropic.${id}-v1:0` }),
    (id) => ({ provider: 'amazon-bedrock', modelId: `us.anthropic.${id}-v1:0` }),
    (id) => ({ provider: 'vertex.anthropic.messages', modelId: `${id}@20250514` }),
    (id) => ({ provider: 'gateway', modelId: `anthropic/${id}` }),
    (id) => `anthropic:${id}`,
  ],
  google: [
    (id) => ({ provider: 'google.generative-ai', modelId: id }),
    (id) => ({ provider: 'google.generative-ai', modelId: `models/${id}` }),
    (id) => ({ provider: 'google.vertex.chat', modelId: id }),
    (id) => ({ provider: 'gateway', modelId: `google/${id}` }),
  ],
};
const suffixes = ['', '-2024-08-06', '-20250514', '-latest', '-001', '-preview-05-06'];

const managerFor = (model: Named, options: Record<string, unknown> = {}) =>
  createContextManager({ store: storeOf([user('u1', 'Hello')]), model, tokenCounter, ...options });

async function budgetOf(model: Named, options: Record<string, unknown> = {}) {
  const context = managerFor(model, options);
  await context.initialMessages();
  return context.lastReport!.budget;
}

function expectRow(named: Named, row: ModelProfileEntry) {
  const { modelId, provider } = typeof named === 'string' ? { modelId: named, provider: undefined } : named;
  expect(resolveModelProfile({ modelId, provider })).toMatchObject({
    family: row.family,
    contextWindow: row.contextWindow,
    maxOutputTokens: row.maxOutputTokens,
  });
}

describe('model objects, by provider and model id', () => {
  it.each([
    [{ provider: 'openai.chat', modelId: 'gpt-4o-2024-08-06' }, 'gpt-4o'],
    [{ provider: 'openai.responses', modelId: 'gpt-5-mini' }, 'gpt-5'],
    [{ provider: 'azure.chat', modelId: 'gpt-4.1-mini' }, 'gpt-4.1'],
    [{ provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5-20250929' }, 'claude-sonnet-4'],
    [{ provider: 'anthropic.messages', modelId: 'claude-3-5-haiku-latest' }, 'claude-3-5-haiku'],
    [{ provider: 'amazon-bedrock', modelId: 'anthropic.claude-sonnet-4-20250514-v1:0' }, 'claude-sonnet-4'],
    [{ provider: 'amazon-bedrock', modelId: 'us.anthropic.claude-opus-4-1-20250805-v1:0' }, 'claude-opus-4'],
    [{ provider: 'vertex.anthropic.messages', modelId: 'claude-opus-4-5@20251101' }, 'claude-opus-4-5'],
    [{ provider: 'google.generative-ai', modelId: 'models/gemini-2.5-pro' }, 'gemini-2.5-pro'],
    [{ provider: 'google.vertex.chat', modelId: 'gemini-2.0-flash-001' }, 'gemini-2.0-flash'],
    [{ provider: 'gateway', modelId: 'anthropic/claude-sonnet-4.5' }, 'claude-sonnet-4'],
  ])('should give %o the profile of %s, in the manager too', async (model, prefix) => {
    const row = modelProfileTable.find((entry) => entry.prefix === prefix)!;
    expectRow(model, row);
    const budget = await budgetOf(model);
    expect([budget.contextWindow, budget.maxOutputTokens]).toEqual([row.contextWindow, row.maxOutputTokens]);
  });

  it('should resolve every table row however a provider names it (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...modelProfileTable),
        fc.constantFrom(...suffixes),
        fc.nat(),
        (row, suffix, pick) => {
          const family = row.family as keyof typeof wrappers;
          const wrap = wrappers[family][pick % wrappers[family].length]!;
          expectRow(wrap(`${row.prefix}${suffix}`), row);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("should take an unknown model's tokenizer family from its provider when its limits are given", () => {
    const limits = { contextWindow: 64_000, maxOutputTokens: 4000 };
    const cases = [
      ['azure.chat', 'prod-east-deployment', 'openai'],
      ['openai.chat', 'ft:my-org:custom', 'openai'],
      ['anthropic.messages', 'my-proxy-model', 'anthropic'],
      ['google.vertex.chat', 'tuned-endpoint-42', 'google'],
      ['acme.chat', 'llama-9', 'other'],
    ] as const;
    for (const [provider, modelId, family] of cases) {
      expect(resolveModelProfile({ modelId, provider, overrides: limits })).toMatchObject({ family, ...limits });
    }
  });

  it('should keep a Bedrock id whole, dropping only its `:0` version suffix', () => {
    const limits = { contextWindow: 300_000, maxOutputTokens: 5000 };
    for (const [modelId, normalized] of [
      ['amazon.nova-pro-v1:0', 'amazon.nova-pro-v1'],
      ['us.amazon.nova-lite-v1:0', 'us.amazon.nova-lite-v1'],
      ['openai:gpt-4o', 'gpt-4o'],
    ] as const) {
      expect(resolveModelProfile({ modelId, provider: 'amazon-bedrock', overrides: limits }).modelId).toBe(normalized);
    }
  });
});

describe('an unknown model', () => {
  const what = 'Pass modelProfile: { contextWindow, maxOutputTokens } or maxInputTokens to createContextManager';

  it('should raise ModelProfileNotFoundError naming the id, the provider and what to pass', () => {
    const model = { provider: 'azure.chat', modelId: 'prod-east-deployment' };
    expect(() => managerFor(model)).toThrowError(ModelProfileNotFoundError);
    expect(() => managerFor(model)).toThrowError(
      `No model profile for "prod-east-deployment" (provider "azure.chat"): its context window is unknown. ${what}`,
    );
    expect(() => managerFor('acme/llama-9')).toThrowError(`No model profile for "acme/llama-9": `);
    // Half the limits is still no window.
    expect(() => managerFor(model, { modelProfile: { maxOutputTokens: 4000 } })).toThrowError(what);
  });

  it('should never get a generic profile, whatever its id (property)', () => {
    // The table's own rule: an id equal to a prefix or continuing it with one of `-.:@/`.
    const known = (id: string) =>
      modelProfileTable.some(
        (row) => id === row.prefix || (id.startsWith(row.prefix) && '-.:@/'.includes(id.charAt(row.prefix.length))),
      );
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9.-]{0,24}$/).filter((id) => !known(id)),
        fc.constantFrom('openai.chat', 'azure.responses', 'anthropic.messages', 'google.generative-ai', 'acme.chat'),
        (modelId, provider) => {
          let error: unknown;
          try {
            managerFor({ provider, modelId });
          } catch (caught) {
            error = caught;
          }
          expect(error).toBeInstanceOf(ModelProfileNotFoundError);
          expect((error as ModelProfileNotFoundError).modelId).toBe(modelId);
          expect((error as Error).message).toContain(JSON.stringify(modelId));
          expect((error as Error).message).toContain(what);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('should budget with maxInputTokens alone, exactly that, in its family', async () => {
    const budget = await budgetOf({ provider: 'azure.chat', modelId: 'prod-east-deployment' }, { maxInputTokens: 900 });
    expect(budget).toMatchObject({ maxInputTokens: 900, safetyMarginTokens: 0, tokenizerFactor: 1 });
    expect(budget.availableTokens + budget.currentInputTokens).toBe(900);
  });

  it('should take maxInputTokens with a window but no output limit, the window still in charge', async () => {
    const model = { provider: 'acme.chat', modelId: 'llama-9' };
    const options = { maxInputTokens: 5000, maxOutputTokens: 700, modelProfile: { contextWindow: 4000 } };
    const budget = await budgetOf(model, options);
    expect(budget).toMatchObject({ contextWindow: 4000, maxOutputTokens: 700, safetyMarginTokens: 400 });
    expect(budget.availableTokens + budget.currentInputTokens).toBe(4000 - 700 - 400);
  });

  it('should name maxInputTokens, not a window, when the budget itself is bad', () => {
    expect(() =>
      managerFor({ provider: 'acme.chat', modelId: 'llama-9' }, { maxInputTokens: Number.NaN }),
    ).toThrowError('Invalid maxInputTokens NaN: expected a positive integer');
  });
});
