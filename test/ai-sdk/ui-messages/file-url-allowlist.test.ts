import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodedPath, isAllowedFileUrl } from '../../../src/ai-sdk/ui-messages/file-url-allowlist.js';

const PREFIX = 'https://uploads.example.com/chat/';
const allowed = (url: string) => isAllowedFileUrl(new URL(url), [PREFIX]);

describe('the file-URL allowlist', () => {
  it.each([
    'https://uploads.example.com/chat/..%2fadmin',
    'https://uploads.example.com/chat/..%2Fadmin/secret.png',
    'https://uploads.example.com/chat/%2e%2e/admin',
    'https://uploads.example.com/chat/%2e%2e%2fadmin',
    'https://uploads.example.com/chat/..%5cadmin',
    'https://uploads.example.com/chat/..%252fadmin',
    'https://uploads.example.com/chat/%3f/../../admin',
    'https://uploads.example.com/chat/%23/../../admin',
    'https://uploads.example.com/chat/%zz',
    'https://uploads.example.com/chatroom/a.png',
    'https://uploads.example.com/admin/a.png',
    'https://uploads.example.com.evil.test/chat/a.png',
    'http://uploads.example.com/chat/a.png',
  ])('should refuse %s', (url) => {
    expect(allowed(url)).toBe(false);
  });

  it.each([
    'https://uploads.example.com/chat/a.png',
    'https://uploads.example.com/chat/a%20b.png',
    'https://uploads.example.com/chat/2026/12/a.png?signature=x%2Fy',
    'https://uploads.example.com/chat/./a.png',
    'https://uploads.example.com/chat/x/../a.png',
  ])('should accept %s', (url) => {
    expect(allowed(url)).toBe(true);
  });

  it('should accept only URLs whose path stays under the prefix however a server decodes and resolves it (property)', () => {
    const segment = fc.constantFrom(
      'a',
      'b.png',
      '..',
      '.',
      '%2e%2e',
      '%2E.',
      '..%2f',
      '..%2F..',
      '%5c..',
      '..%5c',
      '%252f',
      '%3f',
      '%23',
      '%25',
      '%',
      'chat',
      '',
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
        const url = new URL(`https://uploads.example.com/chat/${segments.join('/')}`);
        if (!isAllowedFileUrl(url, [PREFIX])) return;
        // A server that decodes once, or twice, and resolves the dot segments (with `\` as `/`) stays under /chat/.
        for (const decodings of [0, 1, 2]) {
          let path = url.pathname;
          for (let round = 0; round < decodings; round++) path = decodeURIComponent(path);
          const resolved = new URL(
            `http://x${path.replaceAll('\\', '/').replaceAll('?', '%3F').replaceAll('#', '%23')}`,
          ).pathname;
          expect(resolved.startsWith('/chat/'), `${url.href} read ${decodings} times: ${resolved}`).toBe(true);
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('should name the decoded, resolved path, or null when a second decoding could change it', () => {
    expect(decodedPath('/chat/..%2fadmin')).toBe('/admin');
    expect(decodedPath('/chat/a%20b')).toBe('/chat/a%20b');
    expect(decodedPath('/chat/%252f')).toBeNull();
    expect(decodedPath('/chat/%E0%A4%A')).toBeNull();
  });

  it('should leave a function allowlist to decide alone', () => {
    expect(isAllowedFileUrl(new URL('https://a.test/..%2fx'), () => true)).toBe(true);
    expect(isAllowedFileUrl(new URL('https://a.test/x'), () => false)).toBe(false);
  });
});
