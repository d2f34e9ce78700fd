/** The namespace `sdkpp` in browsers: no Node built-ins. */
export * from './api.js';
export { Client } from './browser-client.js';
export { type BrowserVoiceOptions, browserVoiceNetwork } from './voice/browser-voice.js';
