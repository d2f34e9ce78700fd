/** The namespace `sdkpp` on Node. */
export * from './api.js';
export { Client, loopbackRedirect, systemOpener } from './node-client.js';
