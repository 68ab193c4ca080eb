// An independent count of `ModelMessage[]` as a provider receives them, written without looking at the engine's
// counter: every part is serialised the way the AI SDK's providers send it (OpenAI's chat and responses
// converters are the reference: a tool call is its name and its JSON arguments, an error result is
// `{"error":…}`, a denial without a reason is "Tool call execution denied."), and a part no provider has a
// fixed text form for (approvals, custom parts) is counted as its whole JSON without `providerOptions`.
// Counts are exact o200k without the long-run guard; images and non-text files take the profile's flat price,
// and every message the profile's framing.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** The prices the count needs: the fields of a `ModelProfile` it reads. */
export interface SentTokenPrices {
  perMessageTokens: number;
  imageTokens: number;
  fileTokens: number;
}

const cache = new Map<string, number>();
let cachedCharacters = 0;

/** Exact o200k, special tokens counted as text. */
export function exactTokens(value: string): number {
  let count = cache.get(value);
  if (count === undefined) {
    count = countTokens(value, { disallowedSpecial: new Set() });
    // Bounded in characters (JSON of a large tool output is a new string on every call).
    if (cachedCharacters > 50_000_000) {
      cache.clear();
      cachedCharacters = 0;
    }
    cachedCharacters += value.length;
    cache.set(value, count);
  }
  return count;
}

type Loose = Record<string, any>;

const withoutProviderOptions = ({ providerOptions: _providerOptions, ...rest }: Loose) => rest;

/** The tokens of the messages as sent, with the profile's prices and framing. */
export function countSentTokens(messages: readonly Loose[], prices: SentTokenPrices): number {
  let total = 0;
  for (const message of messages) {
    total += prices.perMessageTokens;
    if (typeof message.content === 'string') total += exactTokens(message.content);
    else for (const part of message.content as Loose[]) total += countSentPart(part, prices);
  }
  return total;
}

function countSentPart(part: Loose, prices: SentTokenPrices): number {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return exactTokens(part.text);
    case 'file':
    case 'image':
    case 'reasoning-file':
      return countSentFile(part, prices);
    case 'tool-call':
      return exactTokens(part.toolName) + exactTokens(JSON.stringify(part.input ?? {}));
    case 'tool-result':
      return exactTokens(part.toolName) + countSentOutput(part.output, prices);
    default:
      return exactTokens(JSON.stringify(withoutProviderOptions(part)));
  }
}

function countSentOutput(output: Loose, prices: SentTokenPrices): number {
  switch (output.type) {
    case 'text':
      return exactTokens(output.value);
    case 'json':
      return exactTokens(JSON.stringify(output.value));
    case 'error-text':
    case 'error-json':
      return exactTokens(JSON.stringify({ error: output.value }));
    case 'execution-denied':
      return exactTokens(output.reason ?? 'Tool call execution denied.');
    case 'content':
      return (output.value as Loose[]).reduce(
        (sum, item) =>
          sum +
          (item.type === 'text'
            ? exactTokens(item.text)
            : 'mediaType' in item || /^(file|image)/.test(item.type)
              ? countSentFile(item, prices)
              : exactTokens(JSON.stringify(withoutProviderOptions(item)))),
        0,
      );
    default:
      return exactTokens(JSON.stringify(output));
  }
}

function countSentFile(part: Loose, prices: SentTokenPrices): number {
  const mediaType = String(part.mediaType ?? '');
  const data = part.data as Loose | undefined;
  const text =
    data?.type === 'text'
      ? String(data.text)
      : /^text\/|^application\/json/.test(mediaType)
        ? decodeText(part.data)
        : undefined;
  if (text !== undefined) return exactTokens(text);
  return mediaType.startsWith('image/') || part.type.startsWith('image') ? prices.imageTokens : prices.fileTokens;
}

/** The text a text file carries inline, in any of the AI SDK's data forms; undefined for a remote or provider file. */
function decodeText(data: unknown): string | undefined {
  if (data instanceof Uint8Array) return Buffer.from(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(new Uint8Array(data)).toString('utf8');
  if (data instanceof URL) return decodeText(data.href);
  if (typeof data === 'string') {
    if (data.startsWith('data:')) {
      const [header, body] = [data.slice(0, data.indexOf(',')), data.slice(data.indexOf(',') + 1)];
      return header.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(data)) return undefined;
    return Buffer.from(data, 'base64').toString('utf8');
  }
  if (typeof data === 'object' && data !== null) {
    const file = data as Loose;
    if (file.type === 'text') return String(file.text);
    if (file.type === 'data') return decodeText(file.data);
    if (file.type === 'url') return decodeText(file.url);
  }
  return undefined;
}
