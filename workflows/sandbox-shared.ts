/**
 * Our workflow modules, evaluated once per worker thread and shared by the workflows it runs
 * (`preloadModules` in app/worker.ts, after sandbox-zod and XState). Without it each workflow
 * evaluates all of them again: its own copy of every schema, machine and table, most of what a cached
 * workflow costs in memory and a good part of starting or replaying one. (The SDK still loads the
 * interceptor modules per workflow.)
 *
 * Sharing is safe because these modules hold no workflow's state: a workflow's state lives in its
 * function's closure, module constants are constant, and the module caches (compiled patterns, parsed
 * URLs) are bounded and pure. What they export is frozen here, so no workflow can change what another
 * sees: our plain data (objects, arrays) deeply, exported functions and classes shallowly, library
 * objects (zod schemas, XState machines, patterns) not, because those libraries finish building them
 * on first use (zod binds a schema's methods and settles its parse on the first parse; a pattern keeps
 * its `lastIndex`). The SDK deep-freezes every shared module's exports that are not frozen yet; ours
 * are, so it leaves those library objects to their libraries.
 */
import * as workflows from './index.js';

declare const __webpack_modules__: Record<string, unknown>;
declare const __webpack_module__: { id: string };

// Webpack names a module by its path from the bundling process's directory (`./workflows/…`,
// `./dist/workflows/…`, `../srv/aivyx/workflows/…`): ours are the ones under the same root as this one.
const SELF = /workflows\/sandbox-shared\.[jt]s$/;
const root = __webpack_module__.id.replace(SELF, '');
const isOurs = (id: string): boolean => id.startsWith(root) && /^(core|machines|workflows)\//.test(id.slice(root.length));

const seen = new WeakSet<object>();

/** Freezes plain objects and arrays reachable from `value` through data properties; stops at anything else. */
function freezeData(value: unknown): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return;
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key);
    if (d && 'value' in d) freezeData(d.value);
  }
  Object.freeze(value);
}

const cache = (globalThis as unknown as { __webpack_module_cache__: Record<string, { exports?: unknown } | undefined> })
  .__webpack_module_cache__;
for (const id of Object.keys(__webpack_modules__)) {
  if (!isOurs(id)) continue;
  const exports = cache[id]?.exports;
  if (exports === null || typeof exports !== 'object') continue;
  // An ES module's exports are getters over its bindings; the bindings are constants.
  for (const key of Reflect.ownKeys(exports)) {
    const value: unknown = Reflect.get(exports, key);
    if (typeof value === 'function') Object.freeze(value);
    else freezeData(value);
  }
  Object.freeze(exports);
}
// Recognising none of our modules would leave our schemas to the SDK's freeze, and every workflow
// would fail on its first parse: fail here, when the worker starts, instead.
if (!SELF.test(__webpack_module__.id) || !Object.isFrozen(workflows)) {
  throw new Error(`workflows/sandbox-shared: the bundle's own modules were not recognised (this module is "${__webpack_module__.id}")`);
}
