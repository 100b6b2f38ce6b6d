import { promqlMetricNames } from './promql-metrics';

it.each([
  ['sum by (group, topic) (max by (group, topic, partition) (meld_kafka_consumer_lag)) > 50000', ['meld_kafka_consumer_lag']],
  ['histogram_quantile(0.99, sum by (app, route, le) (rate(meld_http_request_duration_seconds_bucket{route!="unmatched", app=~"a|b"}[5m])))', ['meld_http_request_duration_seconds_bucket']],
  ['sum by (app) (rate(x_total[5m] offset 1h)) / on (app) group_left (pod) y > bool 1e3 and z unless up{job=~"meld/.*"}', ['x_total', 'y', 'z', 'up']],
  ['label_values(meld_http_request_duration_seconds_count, app)', ['meld_http_request_duration_seconds_count']],
  ['rate(foo[$__rate_interval]) * 0.5 + Inf', ['foo']],
  ['count_values("v", build_info) without (instance)', ['build_info']],
])('%s names %j', (expr, names) => {
  expect(promqlMetricNames(expr)).toEqual(names);
});

it('refuses unbalanced brackets', () => {
  expect(() => promqlMetricNames('sum(rate(x[5m])')).toThrow('unbalanced');
});
