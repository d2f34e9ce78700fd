/** The Emscripten module inside `opusscript` (no types of its own): the browser codec loads it with its WASM bytes. */
declare module 'opusscript/build/opusscript_native_wasm.js' {
  export interface OpusScriptHandler {
    _encode(pcmByteOffset: number, length: number, outPointer: number, frameSize: number): number;
    _decode(inPointer: number, length: number, pcmByteOffset: number): number;
  }
  export interface OpusNativeModule {
    OpusScriptHandler: {
      new (sampleRate: number, channels: number, application: number): OpusScriptHandler;
      destroy_handler(handler: OpusScriptHandler): void;
    };
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    readonly HEAPU8: Uint8Array;
    readonly HEAPU16: Uint16Array;
  }
  /** Instantiates synchronously from `wasmBinary` (a browser page cannot read the file itself). */
  export default function createOpusModule(module: { wasmBinary: Uint8Array }): OpusNativeModule;
}
