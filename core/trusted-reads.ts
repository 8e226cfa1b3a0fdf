/**
 * What a trusted read's result vouches for (core/taint.ts, `TurnTaint.addTrusted`): the owner's own
 * data it returned — a file under the trusted roots, a configuration value — never the call's own
 * input echoed back. `config.read {"key": "mallory"}` answers `{"key": "mallory", "value": null}` and
 * `fs.metadata` names the path it was asked about: counted as the owner's words, a model steered by
 * untrusted content could name any recipient, key or path by reading it first. Pure and workflow-safe.
 */

/** Every string and number inside `value` (argv items, a header map's values), as text. */
function scalars(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(scalars);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(scalars);
  return [];
}

/**
 * `output` without what echoes the call's input: every string or number equal to one in `inputs`
 * (the input as written and its canonical form) becomes null, and an entry keyed by one is dropped.
 */
export function withoutEchoes(output: unknown, inputs: readonly unknown[]): unknown {
  const echoed = new Set(inputs.flatMap(scalars).filter((s) => s !== ''));
  const strip = (v: unknown): unknown => {
    if (typeof v === 'string' || typeof v === 'number') return echoed.has(String(v)) ? null : v;
    if (Array.isArray(v)) return v.map(strip);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (echoed.has(k) ? [] : [[k, strip(x)]])));
    return v;
  };
  return strip(output);
}
