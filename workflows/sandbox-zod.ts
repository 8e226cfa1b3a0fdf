/**
 * zod inside the workflow sandbox: the sandbox evaluates every module once per workflow it creates,
 * so each workflow has its own zod and parses each schema a handful of times. zod's compiled fast
 * path (generated with `new Function` on a schema's first parse) costs more than it saves there.
 * Imported first by the bundle's entry point; worker-side code keeps the default.
 */
import { z } from 'zod';

z.config({ jitless: true });
