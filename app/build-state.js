// Whether dist/ (the compiled CLI, `npm run build`) reflects the TypeScript sources: it was built
// (dist/.built is written last) and no source file changed since. Plain JavaScript, so it runs
// before anything is compiled (app/bin.js, infra/bootstrap.sh).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders compiled into dist/ (tsconfig.build.json). */
export const SOURCE_DIRS = ['app', 'core', 'machines', 'workflows', 'activities', 'channels', 'infra'];

/** True when dist/ exists and is newer than every source file under `root`. */
export function isBuildFresh(root) {
  const stamp = join(root, 'dist', '.built');
  if (!existsSync(stamp) || !existsSync(join(root, 'dist', 'app', 'main.js'))) return false;
  const built = statSync(stamp).mtimeMs;
  for (const dir of SOURCE_DIRS) {
    for (const f of readdirSync(join(root, dir), { recursive: true })) {
      const name = String(f);
      if ((name.endsWith('.ts') || name.endsWith('.json')) && statSync(join(root, dir, name)).mtimeMs > built) return false;
    }
  }
  return true;
}
