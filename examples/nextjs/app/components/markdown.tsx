import type { ReactNode } from 'react';

/**
 * A small Markdown renderer for answers, safe by construction: it builds React elements (whose text React escapes)
 * from a whitelist — paragraphs, line breaks, headings, lists, quotes, fenced code, inline code, bold, italic and
 * links to http(s)/mailto only. Nothing is ever passed as HTML, so `<script>` or `<img onerror>` in an answer is
 * shown as text.
 */
export function Markdown({ text }: { text: string }) {
  return <>{blocks(text)}</>;
}

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const INLINE =
  /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*|(?<!\w)_[^_\s][^_\n]*_(?!\w))|(\[[^\]\n]+\]\([^)\s]+\))/;

function inline(text: string, key = 'i'): ReactNode[] {
  const nodes: ReactNode[] = [];
  let rest = text;
  let index = 0;
  while (rest.length > 0) {
    const match = INLINE.exec(rest);
    if (!match) {
      nodes.push(rest);
      break;
    }
    if (match.index > 0) nodes.push(rest.slice(0, match.index));
    const [token] = match;
    const id = `${key}-${index++}`;
    if (match[1]) nodes.push(<code key={id}>{token.slice(1, -1)}</code>);
    else if (match[2]) nodes.push(<strong key={id}>{inline(token.slice(2, -2), id)}</strong>);
    else if (match[3]) nodes.push(<em key={id}>{inline(token.slice(1, -1), id)}</em>);
    else {
      const [, label = '', href = ''] = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(token) ?? [];
      nodes.push(
        SAFE_URL.test(href) ? (
          <a key={id} href={href} target="_blank" rel="noopener noreferrer nofollow">
            {inline(label, id)}
          </a>
        ) : (
          token
        ),
      );
    }
    rest = rest.slice(match.index + token.length);
  }
  return nodes;
}

const withBreaks = (lines: string[], key: string) =>
  lines.flatMap((line, index) => [
    ...(index > 0 ? [<br key={`${key}-br${index}`} />] : []),
    ...inline(line, `${key}-${index}`),
  ]);

function blocks(text: string): ReactNode[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: ReactNode[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    const key = `b${index}`;
    if (line.startsWith('```')) {
      const body: string[] = [];
      index++;
      while (index < lines.length && !lines[index]!.startsWith('```')) body.push(lines[index++]!);
      index++;
      out.push(
        <pre key={key}>
          <code>{body.join('\n')}</code>
        </pre>,
      );
    } else if (/^#{1,6} /.test(line)) {
      const level = /^#+/.exec(line)![0].length;
      const Heading = level <= 3 ? 'h3' : 'h4';
      out.push(<Heading key={key}>{inline(line.replace(/^#+ /, ''), key)}</Heading>);
      index++;
    } else if (/^\s*([-*+]|\d+[.)]) /.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      while (index < lines.length && /^\s*([-*+]|\d+[.)]) /.test(lines[index]!))
        items.push(lines[index++]!.replace(/^\s*([-*+]|\d+[.)]) /, ''));
      const List = ordered ? 'ol' : 'ul';
      out.push(
        <List key={key}>
          {items.map((item, at) => (
            <li key={at}>{inline(item, `${key}-${at}`)}</li>
          ))}
        </List>,
      );
    } else if (/^> ?/.test(line)) {
      const quoted: string[] = [];
      while (index < lines.length && /^> ?/.test(lines[index]!)) quoted.push(lines[index++]!.replace(/^> ?/, ''));
      out.push(<blockquote key={key}>{withBreaks(quoted, key)}</blockquote>);
    } else if (line.trim() === '') {
      index++;
    } else {
      const paragraph: string[] = [];
      while (
        index < lines.length &&
        lines[index]!.trim() !== '' &&
        !/^(```|#{1,6} |> ?|\s*([-*+]|\d+[.)]) )/.test(lines[index]!)
      )
        paragraph.push(lines[index++]!);
      out.push(<p key={key}>{withBreaks(paragraph, key)}</p>);
    }
  }
  return out;
}
