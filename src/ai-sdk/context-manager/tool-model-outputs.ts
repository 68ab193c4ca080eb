import type { ToolSet } from 'ai';
import type { ContextStore, LoadedContext } from '../../model/context-store.js';
import type { ToolOutputConversionInput, ToolResultOutput } from '../../tokens/convert-ui-message-options.js';

type ToolPart = { type: string; toolName?: string; toolCallId?: string; state?: string };
type ConvertedOutput = { input: unknown; output: unknown; result: ToolResultOutput };

/**
 * Applies the tools' `toModelOutput` (sync or async, as the AI SDK v7 allows) to the stored tool results the
 * engine rebuilds earlier turns from, exactly as `convertToModelMessages({ tools })` does: the engine converts
 * synchronously, so every loaded `output-available` part of a tool with `toModelOutput` (a preliminary one too) is
 * converted when the store's context is loaded, and the engine's `convertToolOutput` then reads the result. Tools
 * without `toModelOutput` keep the default (`text` for a string, `json` otherwise).
 */
export function toolModelOutputs(tools: ToolSet | undefined): {
  /** `store`, whose `loadContext` converts the loaded tool results first. */
  wrap: (store: ContextStore) => ContextStore;
  /** Converts the tool results of a loaded context (what `wrap` does on every `loadContext`). */
  convertLoaded: (view: LoadedContext) => Promise<void>;
  /**
   * The engine's synchronous converter after `own` (the app's `convertToolOutput`): the converted result of a
   * loaded part, or undefined for the default. Undefined when neither converts anything (stored counts stay usable).
   */
  converter: (
    own: ((input: ToolOutputConversionInput) => ToolResultOutput | undefined) | undefined,
  ) => ((input: ToolOutputConversionInput) => ToolResultOutput | undefined) | undefined;
} {
  // By tool name and call id; a call id may repeat across turns (providers number calls per response), so each
  // key holds every call loaded under it, told apart by its input and output (with the id, all toModelOutput reads).
  let converted = new Map<string, ConvertedOutput[]>();
  const toolOf = (name: string) => (tools && Object.hasOwn(tools, name) ? tools[name] : undefined);
  const hasConverter = tools !== undefined && Object.values(tools).some((tool) => tool.toModelOutput !== undefined);

  async function convertLoaded(view: LoadedContext): Promise<void> {
    // Only what this load holds: a long thread's earlier results do not pile up in memory.
    const previous = converted;
    const next = new Map<string, ConvertedOutput[]>();
    for (const row of [...view.pinned, ...view.tail]) {
      for (const raw of row.message.parts as unknown as Array<ToolPart & Record<string, unknown>>) {
        const isTool = raw.type.startsWith('tool-') || raw.type === 'dynamic-tool';
        if (!isTool || raw.state !== 'output-available') continue;
        const toolName = raw.type === 'dynamic-tool' ? String(raw.toolName) : raw.type.slice(5);
        const tool = toolOf(toolName);
        if (!tool?.toModelOutput || typeof raw.toolCallId !== 'string') continue;
        const key = `${toolName}\u0000${raw.toolCallId}`;
        const entries = next.get(key) ?? [];
        next.set(key, entries);
        const same = (entry: ConvertedOutput) => entry.input === raw.input && entry.output === raw.output;
        if (entries.some(same)) continue;
        const known = previous.get(key)?.find(same);
        const result =
          known?.result ??
          ((await tool.toModelOutput({
            toolCallId: raw.toolCallId,
            input: raw.input,
            output: raw.output,
          })) as ToolResultOutput);
        entries.push({ input: raw.input, output: raw.output, result });
      }
    }
    converted = next;
  }

  return {
    wrap: (store) =>
      hasConverter
        ? new Proxy(store, {
            get(target, property) {
              if (property === 'loadContext')
                return async () => {
                  const view = await target.loadContext();
                  await convertLoaded(view);
                  return view;
                };
              const value = Reflect.get(target, property, target) as unknown;
              return typeof value === 'function' ? value.bind(target) : value;
            },
          })
        : store,
    convertLoaded,
    converter: (own) => {
      if (!hasConverter) return own;
      return (input) => own?.(input) ?? fromLoaded(converted, input);
    },
  };
}

function fromLoaded(
  converted: ReadonlyMap<string, ConvertedOutput[]>,
  { toolName, toolCallId, input, output }: ToolOutputConversionInput,
): ToolResultOutput | undefined {
  const entries = converted.get(`${toolName}\u0000${toolCallId}`);
  if (!entries) return undefined;
  // The same call, or a copy of it (a migrated message's parts are copies).
  const same = entries.find((entry) => entry.input === input && entry.output === output);
  if (same) return same.result;
  const json = JSON.stringify([input, output]);
  return entries.find((entry) => JSON.stringify([entry.input, entry.output]) === json)?.result;
}
