/** `aivyx sessions [--json]`: the open conversations, read from the running `aivyx up` over REST. */
import { parseArgs } from 'node:util';
import type { SessionSummary } from '../ports.js';
import { restJson, type RestTarget } from './rest-client.js';

export async function runSessionsCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
  const rows = (await restJson(target, 'GET', '/v1/sessions')) as SessionSummary[];
  if (values.json) out(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  else if (rows.length === 0) out('no open sessions (a session closes after a day without a message; the next one re-opens it)\n');
  else out(rows.map((r) => `${r.sessionWorkflowId}  (open since ${r.startTime})\n`).join(''));
  return 0;
}
