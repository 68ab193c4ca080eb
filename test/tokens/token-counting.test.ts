import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  ModelProfileNotFoundError,
  countModelMessageTokens,
  countStoredMessageTokens,
  createContextCalibrator,
  resolveModelProfile,
  storedTokenCountId,
} from '../../src/context/index.js';
import { estimateTokens, exactTokens } from '../../src/tokens/context-measure.js';
import { estimateToolDefinitionTokens, countToolDefinitionTokens } from '../../src/tokens/tool-definition-tokens.js';
import { guardLongRuns } from '../../src/tokens/guard-long-runs.js';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { assistant, reasoning, stepStart, text, tokenCounter, toolResult, user } from '../context/fixtures.js';

const exact = (value: string) => countTokens(value, { disallowedSpecial: new Set() });

const weatherTurn = assistant(
  'a1',
  stepStart,
  reasoning('need the weather'),
  toolResult('weather', 'c1', { city: 'Paris' }, { tempC: 18 }),
  stepStart,
  text('It is 18C.'),
);

describe('loadO200kTokenCounter', () => {
  it('should count exactly like o200k and name itself', () => {
    expect(tokenCounter.id).toBe('o200k_base/gpt-tokenizer@4');
    for (const sample of ['Hello, world', '你好，世界。今天天气很好。', 'const x = { a: [1, 2, 3] };', ''])
      expect(tokenCounter.count(sample)).toBe(exact(sample));
  });

  it('should count special-token strings as text instead of throwing', () => {
    expect(tokenCounter.count('before <|endoftext|> after')).toBe(exact('before <|endoftext|> after'));
  });

  // Unguarded, byte-pair encoding is quadratic in a run's length (100 KB of one letter: seconds). That the counter
  // slices long runs is shown by a run whose sliced count differs from the exact one, not by a clock.
  it('should count long unbroken runs through the long-run guard, so 100 KB of one letter is linear work', () => {
    const run = 'abc'.repeat(300);
    expect(exact(run)).toBe(300);
    expect(tokenCounter.count(run)).toBe(guardLongRuns(exact)(run));
    expect(tokenCounter.count(run)).toBe(305);
    expect(tokenCounter.count('a'.repeat(100_000))).toBe(12_500);
  });
});

describe('guardLongRuns', () => {
  it('should pass ordinary text to the exact counter unchanged', () => {
    const calls: string[] = [];
    const count = guardLongRuns((value) => (calls.push(value), exact(value)));
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(50);
    expect(count(prose)).toBe(exact(prose));
    expect(calls).toEqual([prose]);
  });

  it('should count a long unbroken run in slices of 128 characters, never splitting a surrogate pair', () => {
    const slices: string[] = [];
    const emoji = '😀'.repeat(300);
    guardLongRuns((value) => (slices.push(value), exact(value)))(`start ${emoji} end`);
    const runSlices = slices.filter((slice) => slice.includes('😀'));
    expect(runSlices.length).toBeGreaterThan(1);
    for (const slice of runSlices) expect(slice.isWellFormed()).toBe(true);
    expect(runSlices.join('')).toBe(emoji);
  });

  it('should stay within 1 % of the exact count on 20 KB of CJK without punctuation', () => {
    const cjk = '天地玄黄宇宙洪荒日月盈昃辰宿列张'.repeat(1250);
    const guarded = tokenCounter.count(cjk);
    expect(Math.abs(guarded - exact(cjk)) / exact(cjk)).toBeLessThan(0.01);
  });
});

describe('countModelMessageTokens', () => {
  it('should count text, reasoning, tool names, JSON inputs and outputs, and one message', () => {
    const message = {
      role: 'assistant' as const,
      content: [
        { type: 'reasoning' as const, text: 'think' },
        { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } },
      ],
    };
    expect(countModelMessageTokens(message, tokenCounter)).toEqual({
      text: exact('think') + exact('weather') + exact('{"city":"Paris"}'),
      images: 0,
      files: 0,
      messages: 1,
    });
  });

  it('should count images and files by number, and a text file by its text', () => {
    const message = {
      role: 'user' as const,
      content: [
        {
          type: 'file' as const,
          mediaType: 'image/png',
          data: { type: 'url' as const, url: new URL('https://example.com/a.png') },
        },
        {
          type: 'file' as const,
          mediaType: 'application/pdf',
          data: { type: 'url' as const, url: new URL('https://example.com/a.pdf') },
        },
        {
          type: 'file' as const,
          mediaType: 'text/plain',
          data: {
            type: 'url' as const,
            url: new URL(`data:text/plain;base64,${Buffer.from('hello there').toString('base64')}`),
          },
        },
      ],
    };
    expect(countModelMessageTokens(message, tokenCounter)).toEqual({
      text: exact('hello there'),
      images: 1,
      files: 1,
      messages: 1,
    });
  });

  it('should return the memoised tally for the same message object', () => {
    const message = { role: 'user' as const, content: 'hi there' };
    expect(countModelMessageTokens(message, tokenCounter)).toBe(countModelMessageTokens(message, tokenCounter));
  });
});

describe('countStoredMessageTokens', () => {
  it('should equal the text tokens of the model messages the message converts to', () => {
    const expected =
      exact('need the weather') +
      exact('weather') +
      exact('{"city":"Paris"}') +
      exact('weather') +
      exact('{"tempC":18}') +
      exact('It is 18C.');
    expect(countStoredMessageTokens({ message: weatherTurn, tokenCounter })).toBe(expected);
    expect(countStoredMessageTokens({ message: user('u1', 'Weather in Paris?'), tokenCounter })).toBe(
      exact('Weather in Paris?'),
    );
  });

  it('should name the counter and the serialisation in the stored id', () => {
    expect(storedTokenCountId(tokenCounter)).toBe('o200k_base/gpt-tokenizer@4/model-messages-v2');
  });
});

describe('resolveModelProfile', () => {
  it.each([
    ['gpt-4o', 'gpt-4o', 128_000, 16_384, 1],
    ['openai/gpt-4o-mini', 'gpt-4o-mini', 128_000, 16_384, 1],
    ['openai:gpt-4.1', 'gpt-4.1', 1_047_576, 32_768, 1],
    ['gpt-5-mini', 'gpt-5-mini', 400_000, 128_000, 1],
    ['o4-mini', 'o4-mini', 200_000, 100_000, 1],
    ['o3', 'o3', 200_000, 100_000, 1],
    ['anthropic:claude-sonnet-4.5', 'claude-sonnet-4-5', 200_000, 64_000, 1.25],
    ['us.anthropic.claude-sonnet-4-20250514-v1:0', 'claude-sonnet-4-20250514-v1:0', 200_000, 64_000, 1.25],
    ['claude-opus-4-1', 'claude-opus-4-1', 200_000, 32_000, 1.25],
    ['claude-opus-4-5', 'claude-opus-4-5', 200_000, 64_000, 1.25],
    ['google:gemini-2.5-pro', 'gemini-2.5-pro', 1_048_576, 65_536, 1.1],
    ['models/gemini-2.5-flash', 'gemini-2.5-flash', 1_048_576, 65_536, 1.1],
  ])('should resolve %s', (modelId, normalized, contextWindow, maxOutputTokens, tokenizerFactor) => {
    expect(resolveModelProfile({ modelId })).toMatchObject({
      modelId: normalized,
      contextWindow,
      maxOutputTokens,
      tokenizerFactor,
    });
  });

  it('should apply overrides on top of the table', () => {
    expect(
      resolveModelProfile({ modelId: 'gpt-4o', overrides: { contextWindow: 64_000, safetyMarginRatio: 0.1 } }),
    ).toEqual({
      modelId: 'gpt-4o',
      family: 'openai',
      contextWindow: 64_000,
      maxOutputTokens: 16_384,
      tokenizerFactor: 1,
      perMessageTokens: 4,
      perToolTokens: 10,
      toolsPreambleTokens: 12,
      imageTokens: 1105,
      fileTokens: 3000,
      safetyMarginRatio: 0.1,
    });
  });

  it('should throw ModelProfileNotFoundError naming an unknown model without limits', () => {
    expect(() => resolveModelProfile({ modelId: 'acme/llama-9' })).toThrowError(
      new ModelProfileNotFoundError({ modelId: 'acme/llama-9' }),
    );
    expect(() => resolveModelProfile({ modelId: 'acme/llama-9' })).toThrowError(
      'No model profile for "acme/llama-9": its context window is unknown. Pass modelProfile: { contextWindow, ' +
        'maxOutputTokens } or maxInputTokens to createContextManager (overrides: { contextWindow, maxOutputTokens } ' +
        'to resolveModelProfile).',
    );
  });

  it('should resolve an unknown model with explicit limits, conservatively', () => {
    expect(
      resolveModelProfile({ modelId: 'acme/llama-9', overrides: { contextWindow: 32_000, maxOutputTokens: 4000 } }),
    ).toMatchObject({ family: 'other', tokenizerFactor: 1.25, safetyMarginRatio: 0.1 });
  });

  it('should reject a factor below 1 with InvalidArgumentError', () => {
    expect(() => resolveModelProfile({ modelId: 'gpt-4o', overrides: { tokenizerFactor: 0.8 } })).toThrowError(
      InvalidArgumentError,
    );
    expect(() => resolveModelProfile({ modelId: 'gpt-4o', overrides: { tokenizerFactor: 0.8 } })).toThrowError(
      'Invalid profile.tokenizerFactor 0.8: a factor below 1 would undercount; expected 1 or more.',
    );
  });
});

describe('estimateTokens', () => {
  it('should scale text by the factor and calibration and add fixed prices and per-message framing', () => {
    const claude = resolveModelProfile({ modelId: 'claude-sonnet-4-5' });
    const tally = { text: 1000, images: 1, files: 0, messages: 2 };
    expect(estimateTokens(tally, claude, 1)).toBe(Math.ceil(1000 * 1.25 + 1600) + 2 * 7);
    expect(estimateTokens(tally, claude, 1.2)).toBe(Math.ceil((1000 * 1.25 + 1600) * 1.2) + 2 * 7);
    expect(exactTokens(tally, claude)).toBe(1000 + 1600 + 14);
  });
});

describe('tool definitions', () => {
  it('should count name, description and JSON schema, then add framing and the preamble', () => {
    const tools = [
      {
        name: 'weather',
        description: 'Get the weather',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    const raw = countToolDefinitionTokens({ tools, tokenCounter });
    expect(raw).toBe(
      exact('weather') + exact('Get the weather') + exact('{"type":"object","properties":{"city":{"type":"string"}}}'),
    );
    const claude = resolveModelProfile({ modelId: 'claude-sonnet-4-5' });
    expect(estimateToolDefinitionTokens({ rawTokens: raw, toolCount: 1, profile: claude })).toBe(
      Math.ceil(raw * 1.25) + 20 + 550,
    );
    expect(estimateToolDefinitionTokens({ rawTokens: 0, toolCount: 0, profile: claude })).toBe(0);
  });
});

describe('createContextCalibrator', () => {
  it('should move toward actual/estimated with the smoothing weight and never below the floor', () => {
    const calibrator = createContextCalibrator({ smoothing: 0.5 });
    expect(calibrator.observe({ estimatedTokens: 1000, actualTokens: 1400 })).toBeCloseTo(1.2);
    expect(calibrator.observe({ estimatedTokens: 1000, actualTokens: 1400 })).toBeCloseTo(1.3);
    expect(calibrator.observe({ estimatedTokens: 1000, actualTokens: 500 })).toBe(1);
    expect(calibrator.observations).toBe(3);
  });

  it('should cap the factor at the ceiling and ignore empty reports', () => {
    const calibrator = createContextCalibrator({ smoothing: 1, ceiling: 2 });
    expect(calibrator.observe({ estimatedTokens: 100, actualTokens: 10_000 })).toBe(2);
    expect(calibrator.observe({ estimatedTokens: 100, actualTokens: 0 })).toBe(2);
    expect(calibrator.observations).toBe(1);
  });
});
