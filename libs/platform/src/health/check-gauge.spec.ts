import { metricsRegistry } from '../metrics/metrics';
import { runReadinessCheck } from './check-gauge';

const value = async (check: string) => {
  const metric = await metricsRegistry.getSingleMetric('meld_readiness_check_up')!.get();
  return metric.values.find((v) => v.labels.check === check)?.value;
};

it('records 1 for a check that answers and 0 for one that fails, rethrowing its error', async () => {
  await runReadinessCheck({ name: 'postgres', check: async () => undefined }, new AbortController().signal);
  await expect(runReadinessCheck({ name: 'redis', check: async () => Promise.reject(new Error('connection end')) }, new AbortController().signal)).rejects.toThrow('connection end');
  expect([await value('postgres'), await value('redis')]).toEqual([1, 0]);
  await runReadinessCheck({ name: 'redis', check: async () => undefined }, new AbortController().signal);
  expect(await value('redis')).toBe(1);
});
