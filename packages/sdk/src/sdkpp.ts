/** The namespace `sdkpp` on Node. */
export * from './api.js';
export { Client, loopbackRedirect, systemOpener } from './node-client.js';
export { type NodeVoiceOptions, nodeVoiceNetwork } from './voice/node-voice.js';
