/** The browser entry of the Hearth client library (the `browser` export condition). */
export * from './sdkpp.browser.js';
export * as sdkpp from './sdkpp.browser.js';
