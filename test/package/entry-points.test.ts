import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Reads the built package (`npm run build`, which `pretest` runs): what a user can import is what `dist/`
// exports through package.json "exports", not what `src/` happens to contain.
const root = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; default: string }>;
};

/** Every entry point: its import specifier, its `.d.ts` and its `.js`. */
const entryPoints = Object.entries(manifest.exports)
  .filter((entry): entry is [string, { types: string; default: string }] => typeof entry[1] === 'object')
  .map(([subpath, target]) => ({
    specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
    types: resolve(root, target.types),
    javascript: resolve(root, target.default),
  }));

/** README.md and every page of docs/, as one text: what the documentation tells a user. */
const documentation = [
  'README.md',
  ...readdirSync(resolve(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
  .map((file) => readFileSync(resolve(root, file), 'utf8'))
  .join('\n');

/**
 * The names the README and docs/ tell a user to import, by entry point. A rename that forgets the documentation (or
 * the documentation's promise) fails here.
 */
const documentedNames: Record<string, string[]> = {
  'agent-history': [
    'createAgentHistory',
    'migrate',
    'customMigrationSql',
    'loadO200kTokenCounter',
    'TokenCounter',
    'TenantHistory',
    'ContextStore',
    'ContextMessage',
    'ContextSummary',
    'ContextSnapshot',
    'StoredMessage',
    'StoredThread',
    'StoredRun',
    'SearchHit',
    'AgentHistoryError',
    'InvalidTenantError',
    'NotFoundError',
    'InvalidArgumentError',
    'InvalidMessageError',
    'MessageTooLargeError',
    'VersionConflictError',
    'DatabaseError',
  ],
  'agent-history/schema': ['defineAgentTables', 'AgentTables', 'agentThread', 'agentMessage'],
  'agent-history/ai-sdk': [
    'createChatHandler',
    'createContextManager',
    'createGenerateTextSummarizer',
    'createOfflineSummarizer',
    'chatErrorResponse',
    'streamChatTurn',
    'stopChat',
    'loadThreadPage',
    'toUIMessage',
    'fromUIMessage',
    'ContextPolicyInput',
    'defaultContextPolicy',
    'ContextSummarizer',
    'ContextCalibrator',
    'ContextReport',
    'ModelProfile',
    'resolveModelProfile',
    'createContextEngine',
    'ContextEmptyError',
    'ModelProfileNotFoundError',
    'rebuildContextFromSnapshot',
    'modelProfileTable',
    'resolveContextPolicy',
    'computeContextBudget',
    'createContextCalibrator',
    'ContextStageReport',
    'ContextBudget',
    'convertUIMessageToModelMessages',
    'countModelMessageTokens',
  ],
  'agent-history/testing': ['createMemoryContextStore', 'MemoryContextStore'],
};

const program = ts.createProgram(
  entryPoints.map((entry) => entry.types),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true },
);
const checker = program.getTypeChecker();

/** The names (values and types) that an entry point's `.d.ts` exports. */
function exportedNames(typesFile: string): string[] {
  const source = program.getSourceFile(typesFile);
  if (source === undefined) throw new Error(`${typesFile} is missing: run npm run build`);
  const module = checker.getSymbolAtLocation(source);
  return module === undefined ? [] : checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

/** The bare module specifiers an entry reaches through its relative imports (`.d.ts` or `.js` files). */
function reachedPackages(file: string, seen = new Set<string>(), packages = new Set<string>()): Set<string> {
  if (seen.has(file)) return packages;
  seen.add(file);
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  for (const { fileName } of importedFiles) {
    if (fileName.startsWith('.')) {
      const target = resolve(dirname(file), fileName);
      reachedPackages(file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target, seen, packages);
    } else
      packages.add(
        fileName
          .split('/')
          .slice(0, fileName.startsWith('@') ? 2 : 1)
          .join('/'),
      );
  }
  return packages;
}

/** The names imported from `agent-history` entry points in the code blocks of README.md and docs/. */
function documentedCodeImports(): Array<{ specifier: string; name: string }> {
  const imports: Array<{ specifier: string; name: string }> = [];
  for (const match of documentation.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(agent-history[^']*)'/g)) {
    for (const name of match[1]!.split(','))
      imports.push({ specifier: match[2]!, name: name.replace(/^\s*type\s+/, '').trim() });
  }
  return imports.filter(({ name }) => name !== '');
}

describe('the package entry points', () => {
  it('should export every name the README and docs/ mention, from the entry point they name', () => {
    const missing = Object.entries(documentedNames).flatMap(([specifier, names]) => {
      const entry = entryPoints.find((candidate) => candidate.specifier === specifier);
      const exported = new Set(entry === undefined ? [] : exportedNames(entry.types));
      return names.filter((name) => !exported.has(name)).map((name) => `${specifier}: ${name}`);
    });
    expect(missing).toEqual([]);
  });

  it('should export every name that the code of the README and docs/ imports', () => {
    const imports = documentedCodeImports();
    expect(imports.length).toBeGreaterThan(5);
    const missing = imports.filter(({ specifier, name }) => {
      const entry = entryPoints.find((candidate) => candidate.specifier === specifier);
      return entry === undefined || !exportedNames(entry.types).includes(name);
    });
    expect(missing).toEqual([]);
  });

  it('should export every function the README and docs/ write as a call, or have it as a member of an exported type', () => {
    // Calls the documentation writes that are not this package's: the AI SDK's, Drizzle's, SQL's, OpenTelemetry's, and
    // its own prose
    // (`ceil(…)`).
    const foreign = new Set([
      'addToolApprovalResponse',
      'ceil',
      'convertToModelMessages',
      'drizzle',
      'generateId',
      'generateUUID',
      'registerOTel',
      'useChat',
    ]);
    // A call in code spans (`listMessages(…)`), and every call in a signature heading (`### forkThread(threadId, …)`).
    const headings = [...documentation.matchAll(/^#{2,6} .*$/gm)].map((match) => match[0]);
    const called = new Set([
      ...[...documentation.matchAll(/`([a-zA-Z_]\w*)\(/g)].map((match) => match[1]!),
      ...headings.flatMap((heading) => [...heading.matchAll(/\b([a-zA-Z_]\w*)\(/g)].map((match) => match[1]!)),
    ]);
    const known = new Set<string>();
    for (const entry of entryPoints) {
      const source = program.getSourceFile(entry.types)!;
      for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
        known.add(symbol.name);
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        if (target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))
          for (const property of checker.getDeclaredTypeOfSymbol(target).getProperties()) known.add(property.name);
      }
    }
    const missing = [...called].filter((name) => !known.has(name) && !foreign.has(name) && !/^[a-z]+_/.test(name));
    expect(called.size).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  it('should load every entry point and find its exported values at run time', async () => {
    for (const entry of entryPoints) {
      const loaded = (await import(entry.javascript)) as Record<string, unknown>;
      const values = (documentedNames[entry.specifier] ?? []).filter((name) => /^[a-z]|Error$/.test(name));
      expect(values.filter((name) => loaded[name] === undefined)).toEqual([]);
    }
  });

  it('should export each name from one entry point only', () => {
    const owners = new Map<string, string[]>();
    for (const entry of entryPoints)
      for (const name of exportedNames(entry.types)) owners.set(name, [...(owners.get(name) ?? []), entry.specifier]);
    expect([...owners].filter(([, specifiers]) => specifiers.length > 1)).toEqual([]);
  });

  it('should not need ai (an optional peer) in the main, schema and testing entries, neither at run time nor in types', () => {
    for (const entry of entryPoints.filter(({ specifier }) => !specifier.endsWith('/ai-sdk'))) {
      expect(
        [...reachedPackages(entry.javascript)].filter((name) => name === 'ai' || name.startsWith('@ai-sdk/')),
        entry.specifier,
      ).toEqual([]);
      expect(
        [...reachedPackages(entry.types)].filter((name) => name === 'ai' || name.startsWith('@ai-sdk/')),
        entry.specifier,
      ).toEqual([]);
    }
  });

  it('should let the schema entry import nothing but drizzle-orm', () => {
    const schema = entryPoints.find(({ specifier }) => specifier.endsWith('/schema'))!;
    expect([...reachedPackages(schema.javascript)]).toEqual(['drizzle-orm']);
  });
});
