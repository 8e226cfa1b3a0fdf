/**
 * zod inside the workflow sandbox. The worker evaluates this module, zod and XState once per worker
 * thread and shares them between workflows (`preloadModules` in app/worker.ts); the SDK then freezes
 * what they export, zod's global configuration included. So the configuration is settled here, before
 * the freeze: the compiled fast path off (generated with `new Function` on a schema's first parse, it
 * cost more than it saved when each workflow had its own schemas; now that a thread's workflows share
 * them it may pay off, not measured again), and the defaults zod
 * installs on the first schema it builds (its English messages, its memoizer) installed now.
 * Worker-side code keeps zod's own defaults.
 */
import { z } from 'zod';

z.config({ jitless: true });
// A container schema installs both (a plain one only the messages).
z.object({ settled: z.string() });
