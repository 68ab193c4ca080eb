import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layout's rules, checked on every file of src/ so that they hold for code nobody has written yet.
const SRC = join(import.meta.dirname, '..', 'src');
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replaceAll('\\', '/'));
const read = (file: string) => readFileSync(join(SRC, file), 'utf8');

/** Which top-level folders of src/ each folder may import (besides itself). */
const MAY_IMPORT: Record<string, string[]> = {
  schema: [],
  errors: [],
  telemetry: [],
  model: ['schema', 'errors'],
  tenant: ['schema', 'errors'],
  tokens: ['model', 'errors'],
  store: ['schema', 'errors', 'model', 'tenant', 'tokens', 'telemetry'],
  context: ['model', 'tokens', 'errors', 'telemetry'],
  testing: ['model', 'tokens', 'errors'],
  'ai-sdk': ['schema', 'errors', 'model', 'tenant', 'tokens', 'store', 'context', 'telemetry'],
  cli: ['schema', 'errors', 'tenant', 'store'],
};
/**
 * Which subfolders of src/context/ each subfolder may import (besides itself): the engine runs the stages, the stages
 * fill in the contracts (policy, reports, summarizer, errors), the caches keep what the engine and the stages make of
 * a store's cached rows, and all of them work on segments. Nothing imports upwards, and src/context/index.ts (the
 * feature's public list, for the other folders) is imported by none of them.
 */
const CONTEXT_MAY_IMPORT: Record<string, string[]> = {
  segments: [],
  contracts: ['segments'],
  caches: ['segments'],
  stages: ['segments', 'contracts', 'caches'],
  engine: ['segments', 'contracts', 'caches', 'stages'],
};
/** Declarative definitions, exempt from the size rules. */
const DECLARATIVE = ['schema/define-agent-tables.ts'];

function importsOf(file: string): Array<{ specifier: string; typeOnly: boolean }> {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) || !statement.moduleSpecifier)
      return [];
    const typeOnly = ts.isImportDeclaration(statement)
      ? (statement.importClause?.isTypeOnly ?? false)
      : statement.isTypeOnly;
    return [{ specifier: (statement.moduleSpecifier as ts.StringLiteral).text, typeOnly }];
  });
}

const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '.');
/** The subfolder of src/context/ a file of it is in ('.' for the files directly in src/context/). */
const contextFolderOf = (file: string) => (file.split('/').length > 2 ? file.split('/')[1]! : '.');
/** The files of src/ a file imports, as paths relative to src/. */
const relativeImportsOf = (file: string) =>
  importsOf(file)
    .filter(({ specifier }) => specifier.startsWith('.'))
    .map(({ specifier }) => relative(SRC, join(SRC, file, '..', specifier)).replaceAll('\\', '/'));

describe('src/ layout', () => {
  it('should have a rule for every top-level folder', () => {
    const folders = new Set(files.map(folderOf).filter((folder) => folder !== '.'));
    expect([...folders].sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('should import only from the folders below its own', () => {
    const violations = files.flatMap((file) => {
      const folder = folderOf(file);
      if (folder === '.') return [];
      return relativeImportsOf(file)
        .filter((target) => folderOf(target) !== folder && !MAY_IMPORT[folder]!.includes(folderOf(target)))
        .map((target) => `${file} -> ${target}`);
    });
    expect(violations).toEqual([]);
  });

  it('should have a rule for every subfolder of src/context', () => {
    const folders = new Set(
      files
        .filter((file) => folderOf(file) === 'context')
        .map(contextFolderOf)
        .filter((folder) => folder !== '.'),
    );
    expect([...folders].sort()).toEqual(Object.keys(CONTEXT_MAY_IMPORT).sort());
  });

  it('should import only the subfolders of src/context below its own, and never src/context/index.ts', () => {
    const violations = files
      .filter((file) => folderOf(file) === 'context' && contextFolderOf(file) !== '.')
      .flatMap((file) => {
        const folder = contextFolderOf(file);
        return relativeImportsOf(file)
          .filter((target) => folderOf(target) === 'context' && contextFolderOf(target) !== folder)
          .filter((target) => !CONTEXT_MAY_IMPORT[folder]!.includes(contextFolderOf(target)))
          .map((target) => `${file} -> ${target}`);
      });
    expect(violations).toEqual([]);
  });

  it('should import `ai` at run time only in src/ai-sdk, and drizzle-orm only in src/schema among the packages', () => {
    const violations = files.flatMap((file) =>
      importsOf(file)
        .filter(({ specifier, typeOnly }) => {
          if (specifier.startsWith('.') || specifier.startsWith('node:')) return false;
          if (folderOf(file) === 'schema') return !specifier.startsWith('drizzle-orm');
          return !typeOnly && (specifier === 'ai' || specifier.startsWith('@ai-sdk/')) && folderOf(file) !== 'ai-sdk';
        })
        .map(({ specifier }) => `${file} -> ${specifier}`),
    );
    expect(violations).toEqual([]);
  });

  it('should keep every file under 250 lines and every function under 80 lines', () => {
    const violations: string[] = [];
    for (const file of files.filter((file) => !DECLARATIVE.includes(file))) {
      const text = read(file);
      const lines = text.split('\n').length;
      if (lines > 250) violations.push(`${file}: ${lines} lines`);
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > 80) violations.push(`${file}:${start + 1}: a function of ${end - start + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(violations).toEqual([]);
  });

  it('should have no import cycle between files, type imports included', () => {
    const graph = importGraph();
    // Every relative import resolves to a file of src/, so a cycle cannot hide behind a path the check misread.
    const imports = files.flatMap((file) => relativeImportsOf(file));
    expect([...graph.values()].flat().length).toBe(imports.length);
    expect(importCycles(graph)).toEqual([]);
  });

  it('should find a cycle of three files, and none in a chain (the check itself)', () => {
    const cycle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCycles(cycle)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts']);
    expect(
      importCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('should document every exported declaration', () => {
    const undocumented = files.flatMap((file) => {
      const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
      return source.statements
        .filter(
          (statement) =>
            !ts.isExportDeclaration(statement) &&
            ts.canHaveModifiers(statement) &&
            ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword),
        )
        .filter((statement) => ts.getJSDocCommentsAndTags(statement).length === 0 && !hasJsDoc(statement))
        .map((statement) => `${file}:${source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1}`);
    });
    expect(undocumented).toEqual([]);
  });
});

/** `export const { a, b } = …` and variable statements carry their doc comment on the statement itself. */
function hasJsDoc(statement: ts.Statement): boolean {
  return ((statement as { jsDoc?: unknown[] }).jsDoc?.length ?? 0) > 0;
}

/** Every file of src/ and the files of src/ it imports (values and types), by path relative to src/. */
function importGraph(): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      relativeImportsOf(file)
        .map((target) => target.replace(/\.js$/, '.ts'))
        .map((target) => (known.has(target) ? target : `${target.replace(/\.ts$/, '')}/index.ts`))
        .filter((target) => known.has(target)),
    ]),
  );
}

/**
 * One cycle per strongly connected component of `graph` (Tarjan's algorithm), written as the path that closes it,
 * starting from its first file in sorted order.
 */
function importCycles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do component.push((member = stack.pop()!));
    while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) components.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return components.map((component) => {
    // A path inside the component from its first file back to it: breadth-first, staying inside.
    const inside = new Set(component);
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const target of graph.get(file) ?? []) {
        if (!inside.has(target) || previous.has(target)) continue;
        previous.set(target, file);
        queue.push(target);
      }
      if (previous.has(start)) break;
    }
    const path = [start];
    for (let file = previous.get(start)!; file !== start; file = previous.get(file)!) path.unshift(file);
    return [start, ...path].join(' -> ');
  });
}
