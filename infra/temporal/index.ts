/** Temporal server infrastructure: locating binaries, the local dev server and its supervisor, namespace setup, client errors. */
export { findTemporalCli, findTemporalTestServer, type FindBinaryOptions } from './find-cli.js';
export {
  startDevServer,
  stopLeftoverDevServer,
  ensureNamespaceSetup,
  DEV_SERVER_SQLITE_PRAGMAS,
  MIN_RETENTION_HOURS,
  type DevServer,
  type DevServerExit,
  type DevServerOptions,
} from './dev-server.js';
export { claimNamespace, namespaceOwner, INSTALL_MARKER_KEY, type NamespacePlace } from './install-marker.js';
export { listensOn } from './listener-owner.js';
export { legacyQueueWork, LEGACY_TASK_QUEUE } from './legacy-queue.js';
export {
  superviseDevServer,
  RESTART_BACKOFF_MS,
  STABLE_AFTER_MS,
  type DevServerEvents,
  type SupervisedDevServer,
} from './dev-server-supervisor.js';
export { isTemporalUnreachable, isWorkflowNotFound } from './client-errors.js';
export { freePort } from './free-port.js';
export { clusterConnectionOptions, type ClusterConnectionOptions } from './cluster-connection.js';
export { AIVYX_SEARCH_ATTRIBUTES } from '../../core/search-attributes.js';
