/**
 * Which remote file URLs an incoming message may hold: URL prefixes (`'https://cdn.example.com/uploads/'`: the same
 * origin and a path under that one, also once the path is percent-decoded and its `..` resolved), or a function
 * deciding per URL. Data URLs and parts with a
 * `providerReference` (a provider file id) are always accepted; any other URL is refused unless listed here.
 */
export type FileUrlAllowlist = readonly string[] | ((url: URL) => boolean);

/**
 * The path `pathname` names for a server that percent-decodes it and then resolves its `.` and `..` segments (with
 * `\` taken as `/`), or `null` when it cannot be decoded or still holds a `%` (an encoding of an encoding, which a
 * server decoding twice would read differently).
 */
export function decodedPath(pathname: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('%')) return null;
  // `?` and `#` decoded from the path stay path characters: re-encoded, the URL parser keeps them in the path.
  const escaped = decoded.replaceAll('\\', '/').replaceAll('?', '%3F').replaceAll('#', '%23');
  // Appended to an origin rather than resolved against one, so that a path starting with `//` stays a path.
  return new URL(`http://path.invalid${escaped.startsWith('/') ? escaped : `/${escaped}`}`).pathname;
}

/**
 * Whether `url` lies under one of the `allowed` prefixes (same origin, a path under the prefix's path), both as the
 * URL parser reads its path and as a server that decodes and resolves it does ({@link decodedPath}); a function
 * decides alone.
 */
export function isAllowedFileUrl(url: URL, allowed: FileUrlAllowlist): boolean {
  if (typeof allowed === 'function') return allowed(url) === true;
  const path = decodedPath(url.pathname);
  if (path === null) return false;
  return allowed.some((entry) => {
    const prefix = new URL(entry);
    const prefixPath = decodedPath(prefix.pathname);
    return (
      url.origin === prefix.origin &&
      prefixPath !== null &&
      url.pathname.startsWith(prefix.pathname) &&
      path.startsWith(prefixPath)
    );
  });
}
