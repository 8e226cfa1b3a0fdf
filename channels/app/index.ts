/** The owner's app: a local web page served on loopback (app-server.ts). */
export { APP_CSP, startAppServer, type AppServer, type AppServerOptions } from './app-server.js';
