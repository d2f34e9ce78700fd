import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The platform's published OpenAPI document (SPEC); `HEARTH_REFERENCE_OPENAPI` points elsewhere. */
export const SPEC_PATH =
  process.env['HEARTH_REFERENCE_OPENAPI'] ??
  fileURLToPath(new URL('../../shared/reference/openapi.json', import.meta.url));

interface OpenApiDocument {
  components: { schemas: Record<string, { required?: string[] }> };
}

let document: OpenApiDocument | undefined;

/** The keys SPEC marks required in `components.schemas[name]`; throws for an unknown schema. */
export function requiredKeys(name: string): string[] {
  document ??= JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as OpenApiDocument;
  const schema = document.components.schemas[name];
  if (!schema) throw new Error(`SPEC has no schema ${name}`);
  return schema.required ?? [];
}
