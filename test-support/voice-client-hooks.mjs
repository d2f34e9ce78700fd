/**
 * Module resolution hook for voice tests. @discordjs/voice 0.19.2 loads `libsodium-wrappers` with import():
 * the 0.8 ESM build exports its functions only on `default` once ready, so the client takes undefined ones
 * and cannot use XChaCha20. Hidden from that client only, it falls back to @noble/ciphers.
 */
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'libsodium-wrappers' && context.parentURL?.includes('/@discordjs/voice/')) {
    const error = new Error('libsodium-wrappers is hidden from @discordjs/voice in tests');
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return nextResolve(specifier, context);
}
