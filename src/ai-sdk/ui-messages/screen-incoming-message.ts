import type { UIMessage } from 'ai';
import { FileUrlNotAllowedError } from '../../errors/file-url-not-allowed-error.js';
import { isAllowedFileUrl, type FileUrlAllowlist } from './file-url-allowlist.js';

/** What the route accepts from the client in a new message, beyond the message schemas. */
export interface IncomingMessagePolicy {
  /**
   * Remote file URLs the model may be given. The AI SDK downloads a URL the model does not take itself, from the
   * server, so a client URL reaches inside the network (SSRF). @default none: only data URLs and provider file ids
   */
  allowedFileUrls?: FileUrlAllowlist;
  /**
   * Keep `providerMetadata` on the parts of the client's message (it becomes the provider options of the
   * model call: cache control, provider settings). @default false: stripped before it is stored or sent
   */
  allowClientProviderMetadata?: boolean;
}

type LooseParts = Array<Record<string, unknown>>;

/**
 * Refuses a file part whose URL the policy does not allow ({@link FileUrlNotAllowedError}, nothing written) and
 * strips client `providerMetadata` from every part unless allowed, also inside `steering-message` parts.
 */
export function screenIncomingMessage<UI_MESSAGE extends UIMessage>(
  message: UI_MESSAGE,
  policy: IncomingMessagePolicy,
  path = 'message',
): UI_MESSAGE {
  const parts = screenParts(message.parts as unknown as LooseParts, policy, `${path}.parts`);
  return { ...message, parts } as UI_MESSAGE;
}

function screenParts(parts: LooseParts, policy: IncomingMessagePolicy, path: string): LooseParts {
  return parts.map((part, index) => {
    const at = `${path}[${index}]`;
    if ((part.type === 'file' || part.type === 'reasoning-file') && part.providerReference == null)
      checkFileUrl(part.url, policy.allowedFileUrls, `${at}.url`);
    let screened = part;
    if (!policy.allowClientProviderMetadata && 'providerMetadata' in part) {
      const { providerMetadata: _dropped, ...rest } = part;
      screened = rest;
    }
    if (Array.isArray(part.parts)) screened = { ...screened, parts: screenParts(part.parts, policy, `${at}.parts`) };
    return screened;
  });
}

function checkFileUrl(value: unknown, allowed: FileUrlAllowlist | undefined, path: string): void {
  const text = String(value);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FileUrlNotAllowedError({ path, url: text });
  }
  if (url.protocol === 'data:') return;
  if (allowed && isAllowedFileUrl(url, allowed)) return;
  throw new FileUrlNotAllowedError({ path, url: text });
}
