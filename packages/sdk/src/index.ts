/**
 * The Hearth client library. Use it as the namespace of the spec, `sdkpp.Client`, or import names directly.
 * @packageDocumentation
 */
export * from './sdkpp.js';
export * as sdkpp from './sdkpp.js';
