import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: a self-signed certificate for 127.0.0.1, for voice gateways under test (voice
 * clients such as @discordjs/voice hard-code `wss://`). Node reads NODE_EXTRA_CA_CERTS only when a process
 * starts, so it is set here, before the test workers are forked; tests find the pair in HEARTH_TEST_VOICE_TLS_*.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-voice-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  // Trusted beside any authorities the caller already added.
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  const bundle = join(dir, 'ca-bundle.pem');
  const previous = extra && existsSync(extra) ? `${readFileSync(extra, 'utf8')}\n` : '';
  writeFileSync(bundle, previous + readFileSync(cert, 'utf8'));
  process.env.NODE_EXTRA_CA_CERTS = bundle;
  process.env.HEARTH_TEST_VOICE_TLS_CERT = cert;
  process.env.HEARTH_TEST_VOICE_TLS_KEY = key;
  return () => rmSync(dir, { recursive: true, force: true });
}
