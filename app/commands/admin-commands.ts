/** The operator's commands: `aivyx config`, `aivyx audit`, `aivyx temporal setup`. */
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { describeEnv, envMarkdownTable, type AivyxConfig } from '../../infra/config.js';
import { describeCause } from '../../infra/health.js';
import { findRunningStack } from '../../infra/home-lock.js';
import { restToken } from '../../infra/home-tokens.js';
import { directCommands, passphrase, readStdin } from './common.js';
import { USAGE } from './usage.js';

/** `aivyx config`: every variable of the table with its value (secrets: set/unset) and source; non-zero when one is invalid. */
export function configCommand(args: string[]): number {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, markdown: { type: 'boolean' } } });
  if (values.markdown) {
    process.stdout.write(`${envMarkdownTable()}\n`);
    return 0;
  }
  const rows = describeEnv(process.env);
  if (values.json) process.stdout.write(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  else {
    const width = Math.max(...rows.map((r) => r.name.length));
    let group = '';
    for (const r of rows) {
      if (r.group !== group) process.stdout.write(`${group ? '\n' : ''}# ${(group = r.group)}\n`);
      process.stdout.write(`${r.name.padEnd(width)}  ${r.value}  (${r.source})${r.error ? `\n${' '.repeat(width)}  ✗ ${r.error}` : ''}\n`);
    }
  }
  return rows.some((r) => r.error) ? 1 : 0;
}

/** `aivyx audit`: over the running stack's REST channel, else straight on the database. */
export async function audit(config: AivyxConfig, args: string[]): Promise<number> {
  const { parseAuditCommand, printAudit, restAuditPort, runAuditCommand, withDirectAuditPort } = await directCommands();
  const cmd = await parseAuditCommand(args, readStdin);
  const running = findRunningStack(config.home);
  const result = running
    ? await runAuditCommand(cmd, restAuditPort({ url: running.restUrl, token: restToken(config.home) }))
    : await withDirectAuditPort(config, await passphrase(config), (port) => runAuditCommand(cmd, port));
  return printAudit(cmd, result, (s) => process.stdout.write(s));
}

/** `aivyx temporal setup`: what `aivyx up` does on connect, as a separate step an operator can run with operator rights. */
export async function temporal(config: AivyxConfig, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'setup') throw new AivyxError('Config', `unknown temporal command "${sub ?? ''}"`, { hint: USAGE });
  const { values } = parseArgs({ args: rest, options: { address: { type: 'string' }, namespace: { type: 'string' } } });
  const address = values.address ?? config.temporalAddress;
  if (!address)
    throw new AivyxError('Config', 'no cluster to set up', {
      hint: 'pass --address HOST:PORT or set TEMPORAL_ADDRESS (the local dev server is set up by `aivyx up` itself)',
    });
  const namespace = values.namespace ?? config.namespace;
  const [{ Connection }, { clusterConnectionOptions, ensureNamespaceSetup, MIN_RETENTION_HOURS }] = await Promise.all([
    import('@temporalio/client'),
    import('../../infra/temporal/index.js'),
  ]);
  const connection = await Connection.connect(clusterConnectionOptions(address, process.env)).catch((err: unknown) => {
    throw new AivyxError('Channel', `cannot reach Temporal at ${address}: ${describeCause(err)}`, {
      hint: 'check that the cluster is up and the address is right',
      cause: err,
    });
  });
  try {
    const done = await ensureNamespaceSetup(connection, namespace);
    process.stdout.write(
      [
        `namespace ${namespace} on ${address}:`,
        `  retention: ${done.retentionRaised ? `raised to ${MIN_RETENTION_HOURS} h` : `already at least ${MIN_RETENTION_HOURS} h`}`,
        `  search attributes: ${done.added.length > 0 ? `registered ${done.added.join(', ')}` : 'all present'}`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await connection.close();
  }
}
