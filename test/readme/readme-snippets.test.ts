import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../support/test-database.js';
import { CHILD_PROCESS_TIMEOUT_MS, SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';

// The snippets of README.md and of every page in docs/ are code a user copies: each `ts` block runs here as written,
// as its own script, and must finish by itself (a pool or a PGlite left open keeps the process alive, and the test
// fails) without printing notices. Only the snippets that are a module of an app rather than a script (they start
// with `// lib/`: the route's handler, an agent's turn) are not: the names they leave to the app (its history, how a
// request's tenant and user are found, its tools and instructions) are declared before them, and the process is
// ended after them, as a server would keep running.
const root = resolve(import.meta.dirname, '../..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const snippets = documents.flatMap((file) => {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((match) => ({
    file,
    line: text.slice(0, match.index).split('\n').length,
    code: match[1]!,
  }));
});
/** A file name for a snippet: its document and line (`docs-store.md-40.ts`). */
const scriptName = ({ file, line }: { file: string; line: number }) => `${file.replaceAll('/', '-')}-${line}.ts`;

/** What a snippet may use without declaring it, and how the test provides it. */
const provided: Record<string, string> = {
  tenantId: `const tenantId = crypto.randomUUID();`,
  tenantOf: `const tenantOf = async (_request: Request) => crypto.randomUUID();`,
  userOf: `const userOf = async (_request: Request) => 'user-1';`,
  tools: `const tools = {};`,
  instructions: `const instructions = 'You are a helpful assistant.';`,
  history: `const history = await (async () => {
    const { createAgentHistory, migrate } = await import('agent-history');
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const db = drizzle({ client: await PGlite.create() });
    await migrate(db);
    return createAgentHistory({ db });
  })();`,
};

/** The snippets that are part of an app, not scripts: modules of its `lib/` folder. */
const isAppPart = (code: string) => code.startsWith('// lib/');

function moduleFor(code: string, workingDirectory: string): string {
  if (!isAppPart(code))
    return [`process.chdir(${JSON.stringify(workingDirectory)});`, code, `console.log('snippet-finished');`].join('\n');
  const declared = (name: string) => new RegExp(`\\b(const|let|var|function|class)\\s+${name}\\b`).test(code);
  const prelude = Object.entries(provided)
    .filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declared(name))
    .map(([, declaration]) => declaration);
  // Imports are hoisted, so the prelude runs after them and before the snippet's first statement.
  return [
    `process.chdir(${JSON.stringify(workingDirectory)});`,
    ...prelude,
    code,
    `console.log('snippet-finished');`,
    `process.exit(0);`,
  ].join('\n');
}

describe('the snippets of README.md and docs/', () => {
  let database: TestDatabase;
  const folder = join(root, '.tmp', `readme-snippets-${process.pid}`);
  const workingDirectory = mkdtempSync(join(tmpdir(), 'agent-history-readme-'));

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    mkdirSync(folder, { recursive: true });
  });
  afterAll(async () => {
    await database?.close();
    rmSync(folder, { recursive: true, force: true });
    rmSync(workingDirectory, { recursive: true, force: true });
  });

  it('should have TypeScript snippets to run, in the README and in docs/', () => {
    expect(snippets.filter(({ file }) => file === 'README.md').length).toBeGreaterThanOrEqual(4);
    expect(snippets.filter(({ file }) => file.startsWith('docs/')).length).toBeGreaterThanOrEqual(4);
  });

  // tsx strips types without checking them: a snippet with a wrong option name or type would still run. Checked
  // here with the repository's compiler options, the package names mapped to the sources as for the examples.
  it(
    'should type-check every snippet',
    async () => {
      const checked = join(folder, 'typecheck');
      mkdirSync(checked, { recursive: true });
      for (const snippet of snippets)
        writeFileSync(join(checked, scriptName(snippet)), moduleFor(snippet.code, workingDirectory));
      writeFileSync(
        join(checked, 'tsconfig.json'),
        JSON.stringify({
          extends: join(root, 'tsconfig.json'),
          // A snippet shows a call and may leave its result unused, as a user's first lines do.
          compilerOptions: {
            noEmit: true,
            sourceMap: false,
            declaration: false,
            noUnusedLocals: false,
            noUnusedParameters: false,
          },
          include: ['*.ts'],
        }),
      );
      let output = '';
      try {
        await promisify(execFile)(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(checked, 'tsconfig.json')], {
          cwd: root,
        });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      expect(output).toBe('');
    },
    SUBPROCESS_TIMEOUT_MS,
  );

  it.each(snippets)(
    'should run the snippet at $file:$line as written',
    async (snippet) => {
      const file = join(folder, scriptName(snippet));
      writeFileSync(file, moduleFor(snippet.code, workingDirectory));
      const { stdout } = await promisify(execFile)(join(root, 'node_modules', '.bin', 'tsx'), [file], {
        cwd: root,
        env: { ...process.env, OWNER_DATABASE_URL: database.adminUrl, DATABASE_URL: database.appUrl },
        timeout: CHILD_PROCESS_TIMEOUT_MS, // a snippet that never exits fails here
      });
      expect(stdout).toContain('snippet-finished');
      expect(stdout).not.toMatch(/NOTICE|severity/);
    },
    SUBPROCESS_TIMEOUT_MS,
  );
});
