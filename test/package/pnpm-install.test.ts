import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';

// Installs the packed package the way a user's pnpm project does: pnpm's strict layout links only the declared
// dependencies and peers into a package's reach, so a type or module the package uses without declaring it
// (such as @ai-sdk/provider-utils, which ai depends on) is not found there, where npm's hoisting would hide it.
const root = resolve(import.meta.dirname, '../..');
const PNPM = 'pnpm@10.34.8';
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const project = mkdtempSync(join(tmpdir(), 'agent-history-pnpm-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** A consumer that imports every entry point and uses one value and one type of each. */
const consumer = `
import { createAgentHistory, type ContextStore, type TenantHistory } from 'agent-history';
import { agentMessage, type AgentTables } from 'agent-history/schema';
import { createContextManager, resolveModelProfile, type ContextReport } from 'agent-history/ai-sdk';
import { createMemoryContextStore, type MemoryContextStore } from 'agent-history/testing';

export const values = [createAgentHistory, agentMessage, createContextManager, resolveModelProfile, createMemoryContextStore];
export type Types = [ContextStore, TenantHistory, AgentTables, ContextReport, MemoryContextStore];
export const window: number = resolveModelProfile({ modelId: 'gpt-4o' }).contextWindow;
`;

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, CI: 'true' } });
}

describe('the published package', () => {
  it(
    'should install with pnpm (strict layout) with only its declared peers and type-check a consumer of every entry point',
    () => {
      // `pretest` has built dist/; packing without scripts packs that build.
      const [packed] = JSON.parse(
        run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], root),
      );
      const tarball = (packed as { filename: string }).filename;
      const peers = Object.fromEntries(
        Object.keys(manifest.peerDependencies).map((name) => [name, manifest.devDependencies[name]!]),
      );
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({
          name: 'consumer',
          private: true,
          type: 'module',
          dependencies: { 'agent-history': `file:./${tarball}`, ...peers },
          devDependencies: { '@types/node': manifest.devDependencies['@types/node'] },
        }),
      );
      writeFileSync(join(project, 'consumer.ts'), consumer);
      // hoist=false: pnpm's default hoists every package into node_modules/.pnpm/node_modules, where an
      // undeclared import still resolves; without it (checked) a d.ts importing @ai-sdk/provider-utils fails here.
      run('npx', ['--yes', PNPM, 'install', '--prefer-offline', '--config.hoist=false'], project);

      const program = ts.createProgram([join(project, 'consumer.ts')], {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2023,
        strict: true,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(project, 'node_modules/@types')],
      });
      // The consumer, and every declaration file of the package (its peers' own files are theirs to check).
      const packageFolder = realpathSync(join(project, 'node_modules/agent-history'));
      const checked = program
        .getSourceFiles()
        .filter(
          (file) => file.fileName.endsWith('consumer.ts') || realpathSync(file.fileName).startsWith(packageFolder),
        );
      expect(checked.filter((file) => file.fileName.endsWith('.d.ts')).length).toBeGreaterThan(
        Object.keys(manifest.exports).length,
      );
      const diagnostics = checked.flatMap((file) => [
        ...program.getSyntacticDiagnostics(file),
        ...program.getSemanticDiagnostics(file),
      ]);
      expect(
        diagnostics.map(
          (diagnostic) =>
            `${diagnostic.file?.fileName.slice(project.length)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
        ),
      ).toEqual([]);
    },
    SUBPROCESS_TIMEOUT_MS,
  );
});
