/**
 * The metric names a PromQL expression reads, by a small tokenizer (no PromQL parser is a
 * dependency): strings, label matchers `{...}`, ranges `[...]`, `offset` durations and the
 * label lists of `by`/`without`/`on`/`ignoring`/`group_left`/`group_right` are dropped; what
 * remains is an identifier that is not followed by `(` (a function or an aggregation with
 * its argument) and is not a keyword or aggregation operator. Grafana's `label_values(m, l)`
 * counts `m`. Throws on unbalanced brackets.
 */
const KEYWORDS = new Set([
  'and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'atan2',
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio',
  'inf', 'nan',
]);

export function promqlMetricNames(expr: string): string[] {
  let depth = 0;
  for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')) {
    if ('({['.includes(ch)) depth++;
    if (')}]'.includes(ch) && --depth < 0) throw new Error(`unbalanced brackets: ${expr}`);
  }
  if (depth !== 0) throw new Error(`unbalanced brackets: ${expr}`);
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/label_values\(\s*([a-zA-Z_:][\w:]*)\s*,[^)]*\)/g, ' $1 ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\boffset\s+-?\w+/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of text.matchAll(/(?<![\w.$])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1].toLowerCase())) continue;
    names.add(m[1]);
  }
  return [...names];
}
