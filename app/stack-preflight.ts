/** What is checked before the stack opens or starts anything: the role's needs and the ports it will bind. */
import { AivyxError } from '../core/errors.js';
import type { AivyxConfig } from '../infra/config.js';
import type { WantedPort } from '../infra/port-check.js';
import { runsChannels, type StackOptions, type StackRole } from './stack-types.js';

/** The scale-out roles share a real cluster and PostgreSQL (PGlite and the dev server belong to one process). */
export function checkRole(config: AivyxConfig, role: StackRole, noHostTools: boolean): void {
  if (role !== 'worker' && role !== 'gateway') return;
  const missing = [config.temporalAddress ? undefined : 'TEMPORAL_ADDRESS', config.databaseUrl ? undefined : 'DATABASE_URL'].filter(
    Boolean,
  );
  if (missing.length > 0)
    throw new AivyxError('Config', `aivyx ${role} needs ${missing.join(' and ')}: its processes share a Temporal cluster and PostgreSQL`, {
      hint: 'set them (docs/DEPLOY.md), or run everything in one process with aivyx up',
    });
  if (noHostTools && !config.hostQueue)
    throw new AivyxError('Config', '--no-host-tools needs AIVYX_HOST_QUEUE: without a host queue every worker runs the host tools', {
      hint: 'set AIVYX_HOST_QUEUE to the same value in every process of the install (docs/DEPLOY.md)',
    });
}

/** Every port this process will listen on, with the setting that moves it (0: any free port, not checked). */
export function portsToBind(config: AivyxConfig, role: StackRole, opts: Pick<StackOptions, 'headless' | 'restPort'>): WantedPort[] {
  const devServer = !config.temporalAddress;
  const codec = !opts.headless && (devServer || role === 'gateway');
  return [
    ...(devServer ? [{ port: config.temporalPort, setting: 'AIVYX_TEMPORAL_PORT', what: 'the Temporal dev server' }] : []),
    ...(devServer && !opts.headless ? [{ port: config.uiPort, setting: 'AIVYX_UI_PORT', what: 'the Temporal UI' }] : []),
    ...(codec ? [{ port: config.codecPort, setting: 'AIVYX_CODEC_PORT', what: "the UI's codec server" }] : []),
    ...(runsChannels(role) ? [restPortOf(config, opts)] : []),
    ...(runsChannels(role) && !opts.headless ? [{ port: config.appPort, setting: 'AIVYX_APP_PORT', what: "the owner's app" }] : []),
  ];
}

/** The REST channel's port: the configured one (`up`, gateway) or the caller's (0 for a standalone command). */
export function restPortOf(config: AivyxConfig, opts: Pick<StackOptions, 'restPort'>): WantedPort {
  return { port: opts.restPort ?? config.restPort, setting: 'AIVYX_REST_PORT', what: 'the REST channel' };
}
