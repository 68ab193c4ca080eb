// W4 prepareStep is written by another engineer in bench/prepare-step.ts (`runPrepareStepBench({ sizes })`).
// >>> W4 HOOK: until that file exists this reports `skipped`; once it does, its result is recorded as returned.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function runPrepareStepHook(
  benchDir: string,
  sizes: number[],
): Promise<{ skipped: string } | { result: unknown }> {
  const file = join(benchDir, 'prepare-step.ts');
  if (!existsSync(file)) return { skipped: 'bench/prepare-step.ts does not exist yet (W4 hook)' };
  const module = (await import(pathToFileURL(file).href)) as {
    runPrepareStepBench?: (options: { sizes: number[] }) => Promise<unknown>;
  };
  if (typeof module.runPrepareStepBench !== 'function')
    return { skipped: 'bench/prepare-step.ts does not export runPrepareStepBench' };
  return { result: await module.runPrepareStepBench({ sizes }) };
}
