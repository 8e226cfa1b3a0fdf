/** Temporal server infrastructure: locating binaries, the local dev server, namespace setup. */
export { findTemporalCli, findTemporalTestServer, type FindBinaryOptions } from './find-cli.js';
export { startDevServer, ensureNamespaceSetup, MIN_RETENTION_HOURS, type DevServer, type DevServerOptions } from './dev-server.js';
export { freePort } from './free-port.js';
export { AIVYX_SEARCH_ATTRIBUTES } from '../../core/search-attributes.js';
