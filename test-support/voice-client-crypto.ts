import { register } from 'node:module';

// Before @discordjs/voice is loaded: its XChaCha20 library is chosen once, when the module is evaluated.
register(new URL('./voice-client-hooks.mjs', import.meta.url));
