import { metrics, type Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll } from 'vitest';

/** A reader the test collects from when it wants: the metrics as an application's exporter would receive them. */
class CollectingReader extends MetricReader {
  protected onForceFlush = async () => {};
  protected onShutdown = async () => {};
}

/** One data point as a test compares it: its attributes, and a sum's value or a histogram's count and sum. */
export interface Point {
  attributes: Attributes;
  value?: number;
  count?: number;
  sum?: number;
}

/** The package's metrics, collected from a real meter provider (cumulative, since the provider was registered). */
export interface InMemoryMetrics {
  /** The data points of the instrument `name` of the `agent-history` meter, or `[]` when it recorded nothing. */
  points(name: string): Promise<Point[]>;
  /** The sum of the counter `name` over the points whose attributes include `attributes`. */
  total(name: string, attributes?: Attributes): Promise<number>;
}

/**
 * Registers the OpenTelemetry metrics SDK (a `MeterProvider` with a reader collected on demand) as the global meter
 * provider for the tests of the calling file, and unregisters it after them. Values add up across the file's
 * tests: compare totals before and after what a test does.
 */
export function useInMemoryMetrics(): InMemoryMetrics {
  const reader = new CollectingReader();
  beforeAll(() => {
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  afterAll(() => metrics.disable());
  async function points(name: string): Promise<Point[]> {
    const { resourceMetrics } = await reader.collect();
    const found: MetricData | undefined = resourceMetrics.scopeMetrics
      .filter((scope) => scope.scope.name === 'agent-history')
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === name);
    if (!found) return [];
    return found.dataPoints.map((point): Point => {
      if (found.dataPointType === DataPointType.HISTOGRAM) {
        const { count, sum } = point.value as { count: number; sum?: number };
        return { attributes: point.attributes, count, sum };
      }
      return { attributes: point.attributes, value: point.value as number };
    });
  }
  return {
    points,
    total: async (name, attributes = {}) =>
      (await points(name))
        .filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
        .reduce((total, point) => total + (point.value ?? point.count ?? 0), 0),
  };
}
