import {
  BOT_INSTALL_SCOPES,
  type FormErrorLeaf,
  FormErrors,
  IntegrationTypes,
  parsePermissions,
  Scopes,
} from '@hearth/protocol';
import { formErrorTree, HearthError } from '../../kernel/errors.js';

/** `oauth2_install_params`: the scopes and permissions of the app's default authorization link. */
export interface InstallParams {
  scopes: string[];
  /** A permission bitfield as a decimal string. */
  permissions: string;
}

/** `integration_types_config` keyed by integration type ("0" guild install, "1" user install). */
export type IntegrationTypesConfig = Partial<Record<'0' | '1', { oauth2_install_params?: InstallParams }>>;

const TYPE_KEYS = [String(IntegrationTypes.GuildInstall), String(IntegrationTypes.UserInstall)] as const;

/**
 * Checks install parameters (DOCS application: Install Params Object): scopes from the install scopes of the
 * catalogue, each once; `bot` only where a bot can join (guild install); permissions a bitfield.
 */
function checkInstallParams(
  raw: unknown,
  path: string[],
  integrationType: 0 | 1,
  problems: Array<[string[], FormErrorLeaf]>,
): InstallParams | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push([path, FormErrors.object()]);
    return undefined;
  }
  const { scopes, permissions } = raw as { scopes?: unknown; permissions?: unknown };
  const checked: string[] = [];
  if (!Array.isArray(scopes)) {
    problems.push([[...path, 'scopes'], scopes === undefined ? FormErrors.required() : FormErrors.array()]);
  } else if (scopes.length === 0) {
    problems.push([[...path, 'scopes'], FormErrors.minItems(1)]);
  } else {
    scopes.forEach((scope, index) => {
      const at = [...path, 'scopes', String(index)];
      if (typeof scope !== 'string' || !(BOT_INSTALL_SCOPES as readonly string[]).includes(scope)) {
        problems.push([at, FormErrors.choices(BOT_INSTALL_SCOPES)]);
      } else if (scope === Scopes.Bot && integrationType === IntegrationTypes.UserInstall) {
        problems.push([at, FormErrors.botScopeGuildInstallOnly()]);
      } else if (checked.includes(scope)) {
        problems.push([at, FormErrors.invalid()]);
      } else {
        checked.push(scope);
      }
    });
  }
  let bits: bigint | undefined = 0n;
  if (typeof permissions === 'string') bits = parsePermissions(permissions);
  else if (typeof permissions === 'number' && Number.isSafeInteger(permissions) && permissions >= 0)
    bits = BigInt(permissions);
  else if (permissions !== undefined && permissions !== null) bits = undefined;
  if (bits === undefined) problems.push([[...path, 'permissions'], FormErrors.integer(permissions)]);
  return { scopes: checked, permissions: (bits ?? 0n).toString() };
}

/** `install_params` of PATCH: a guild-install link (the `bot` scope allowed), or null to clear it. */
export function parseInstallParams(raw: unknown): InstallParams | null {
  if (raw === null) return null;
  const problems: Array<[string[], FormErrorLeaf]> = [];
  const params = checkInstallParams(raw, ['install_params'], IntegrationTypes.GuildInstall, problems);
  if (problems.length > 0 || !params)
    throw new HearthError('InvalidFormBody', { errors: formErrorTree(problems) });
  return params;
}

/**
 * `integration_types_config` of PATCH: one or both install types, each with its install parameters or none;
 * a key left out keeps its current value, a null value removes the install type.
 */
export function parseIntegrationTypesConfig(
  raw: unknown,
  current: IntegrationTypesConfig,
): IntegrationTypesConfig {
  const problems: Array<[string[], FormErrorLeaf]> = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new HearthError('InvalidFormBody', {
      errors: formErrorTree([[['integration_types_config'], FormErrors.object()]]),
    });
  }
  const next: IntegrationTypesConfig = { ...current };
  const entries = Object.entries(raw);
  if (entries.length === 0) problems.push([['integration_types_config'], FormErrors.minItems(1)]);
  for (const [key, value] of entries) {
    const path = ['integration_types_config', key];
    if (!(TYPE_KEYS as readonly string[]).includes(key)) {
      problems.push([path, FormErrors.choices(TYPE_KEYS)]);
      continue;
    }
    const typeKey = key as '0' | '1';
    if (value === null) {
      delete next[typeKey];
      continue;
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push([path, FormErrors.object()]);
      continue;
    }
    const install = (value as { oauth2_install_params?: unknown }).oauth2_install_params;
    if (install === undefined || install === null) {
      next[typeKey] = {};
      continue;
    }
    const params = checkInstallParams(
      install,
      [...path, 'oauth2_install_params'],
      Number(typeKey) as 0 | 1,
      problems,
    );
    if (params) next[typeKey] = { oauth2_install_params: params };
  }
  if (problems.length > 0) throw new HearthError('InvalidFormBody', { errors: formErrorTree(problems) });
  return next;
}
