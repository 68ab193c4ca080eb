import type { ToolSet } from 'ai';
import type { ContextStore, LoadedContext } from '../../model/context-store.js';
import type { ToolOutputConversionInput, ToolResultOutput } from '../../tokens/convert-ui-message-options.js';

type ToolPart = { type: string; toolName?: string; toolCallId?: string; state?: string; preliminary?: boolean };

/**
 * Applies the tools' `toModelOutput` (sync or async, as the AI SDK v7 allows) to the stored tool results the
 * engine rebuilds earlier turns from, exactly as `convertToModelMessages({ tools })` does: the engine converts
 * synchronously, so every loaded `output-available` part of a tool with `toModelOutput` is converted when the
 * store's context is loaded, and the engine's `convertToolOutput` then reads the result. Tools without
 * `toModelOutput` keep the default (`text` for a string, `json` otherwise).
 */
export function toolModelOutputs(tools: ToolSet | undefined): {
  /** `store`, whose `loadContext` converts the loaded tool results first. */
  wrap: (store: ContextStore) => ContextStore;
  /**
   * The engine's synchronous converter after `own` (the app's `convertToolOutput`): the converted result of a
   * loaded part, or undefined for the default. Undefined when neither converts anything (stored counts stay usable).
   */
  converter: (
    own: ((input: ToolOutputConversionInput) => ToolResultOutput | undefined) | undefined,
  ) => ((input: ToolOutputConversionInput) => ToolResultOutput | undefined) | undefined;
} {
  const converted = new Map<string, { output: unknown; result: ToolResultOutput }>();
  const toolOf = (name: string) => (tools && Object.hasOwn(tools, name) ? tools[name] : undefined);
  const hasConverter = tools !== undefined && Object.values(tools).some((tool) => tool.toModelOutput !== undefined);

  async function convertLoaded(view: LoadedContext): Promise<void> {
    const seen = new Set<string>();
    for (const row of [...view.pinned, ...view.tail]) {
      for (const raw of row.message.parts as unknown as Array<ToolPart & Record<string, unknown>>) {
        const isTool = raw.type.startsWith('tool-') || raw.type === 'dynamic-tool';
        if (!isTool || raw.state !== 'output-available' || raw.preliminary === true) continue;
        const toolName = raw.type === 'dynamic-tool' ? String(raw.toolName) : raw.type.slice(5);
        const tool = toolOf(toolName);
        if (!tool?.toModelOutput || typeof raw.toolCallId !== 'string') continue;
        const key = `${toolName}\u0000${raw.toolCallId}`;
        seen.add(key);
        if (converted.get(key)?.output === raw.output) continue;
        const result = await tool.toModelOutput({ toolCallId: raw.toolCallId, input: raw.input, output: raw.output });
        converted.set(key, { output: raw.output, result: result as ToolResultOutput });
      }
    }
    // Only what this load holds: a long thread's earlier results do not pile up in memory.
    for (const key of converted.keys()) if (!seen.has(key)) converted.delete(key);
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
    converter: (own) => {
      if (!hasConverter) return own;
      return (input) => own?.(input) ?? fromLoaded(input);
    },
  };

  function fromLoaded({ toolName, toolCallId, output }: ToolOutputConversionInput): ToolResultOutput | undefined {
    const entry = converted.get(`${toolName}\u0000${toolCallId}`);
    if (!entry) return undefined;
    // The same part, or a copy of it (a migrated message's parts are copies).
    const same = entry.output === output || JSON.stringify(entry.output) === JSON.stringify(output);
    return same ? entry.result : undefined;
  }
}
