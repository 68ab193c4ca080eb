import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The public surface of each entry point, as committed lists: adding, removing or renaming a public name is a
// visible diff of test/package/public-names/, reviewed like code. After a deliberate change, rewrite the lists with
//   UPDATE_PUBLIC_NAMES=1 npx vitest run test/package/public-names.test.ts
// The lists are read from the built package (`npm run build`, which `pretest` runs): what a user can import.
const root = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string }>;
};
const entryPoints = Object.entries(manifest.exports)
  .filter((entry): entry is [string, { types: string }] => typeof entry[1] === 'object')
  .map(([subpath, target]) => ({
    specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
    types: resolve(root, target.types),
  }));

const program = ts.createProgram(
  entryPoints.map((entry) => entry.types),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true },
);
const checker = program.getTypeChecker();

/** `name kind` per exported name, sorted: kind is `value`, `type` or `value+type` (a class, or a const and a type). */
function surface(typesFile: string): string[] {
  const source = program.getSourceFile(typesFile);
  if (source === undefined) throw new Error(`${typesFile} is missing: run npm run build`);
  return checker
    .getExportsOfModule(checker.getSymbolAtLocation(source)!)
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const value = (target.flags & ts.SymbolFlags.Value) !== 0;
      const type = (target.flags & ts.SymbolFlags.Type) !== 0;
      return `${symbol.name} ${value && type ? 'value+type' : value ? 'value' : 'type'}`;
    })
    .sort();
}

const listFile = (specifier: string) =>
  resolve(import.meta.dirname, 'public-names', `${specifier.replaceAll('/', '__')}.txt`);

describe('the public names of each entry point', () => {
  it.each(entryPoints)('should be the committed list for $specifier', ({ specifier, types }) => {
    const actual = surface(types);
    const file = listFile(specifier);
    if (process.env.UPDATE_PUBLIC_NAMES === '1') writeFileSync(file, `${actual.join('\n')}\n`);
    expect(existsSync(file), `${file} is missing`).toBe(true);
    const committed = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const added = actual.filter((line) => !committed.includes(line));
    const removed = committed.filter((line) => !actual.includes(line));
    expect({ added, removed }, `the public surface of ${specifier} changed`).toEqual({ added: [], removed: [] });
    expect(actual.length).toBeGreaterThan(0);
  });
});
