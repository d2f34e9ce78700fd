import {
  ALL_PERMISSIONS,
  AVAILABLE_LOCALES,
  CHAT_INPUT_NAME_PATTERN,
  ChannelTypes,
  EntryPointCommandHandlerTypes,
  type FormErrorLeaf,
  FormErrors,
  IntegrationTypes,
  InteractionContextTypes,
  CommandLimits as L,
  ApplicationCommandOptionTypes as O,
  ApplicationCommandTypes as T,
} from '@hearth/protocol';
import { formErrorTree, HearthError } from '../../kernel/errors.js';

/**
 * The rules of a command body (docs: Application Command Object, naming, option structure, choices), read by
 * hand so that each refusal lands at its own path of the 50035 tree (`options.0.choices.3.value`) with the
 * platform's codes; unknown fields are ignored, as the platform does.
 */

type Json = Record<string, unknown>;
type Localizations = Record<string, string> | null;

/** A command as stored and served, without its ids and version. */
export interface CommandDefinition {
  type: number;
  name: string;
  name_localizations: Localizations;
  description: string;
  description_localizations: Localizations;
  options: Json[] | null;
  default_member_permissions: string | null;
  contexts: number[] | null;
  integration_types: number[] | null;
  nsfw: boolean;
  handler: number | null;
}

/** Where a command goes; `activities` when the application has Activities enabled (the EMBEDDED flag). */
export type Scope = { guildId: string | null; activities?: boolean };

type Path = readonly string[];

/** Collects (path, leaf) pairs; `fail()` throws them as one Invalid Form Body. */
export class FormErrorsCollector {
  readonly entries: Array<[string[], FormErrorLeaf]> = [];

  add(path: Path, leaf: FormErrorLeaf): void {
    this.entries.push([[...path], leaf]);
  }

  get failed(): boolean {
    return this.entries.length > 0;
  }

  error(): HearthError {
    return new HearthError('InvalidFormBody', { errors: formErrorTree(this.entries) });
  }
}

const COMMAND_TYPES: readonly number[] = Object.values(T);
const OPTION_TYPES: readonly number[] = Object.values(O);
const HANDLERS: readonly number[] = Object.values(EntryPointCommandHandlerTypes);
const CONTEXTS: readonly number[] = Object.values(InteractionContextTypes);
const INTEGRATION_TYPES: readonly number[] = Object.values(IntegrationTypes);
const CHANNEL_TYPES: readonly number[] = Object.values(ChannelTypes);
const LOCALES: ReadonlySet<string> = new Set(AVAILABLE_LOCALES);
const CHOICE_TYPES: readonly number[] = [O.String, O.Integer, O.Number];
const NESTING_TYPES: readonly number[] = [O.Subcommand, O.SubcommandGroup];

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const absent = (value: unknown) => value === undefined || value === null;

/**
 * Reads one command body. `at` prefixes every path (the index of a bulk overwrite entry); `errors` collects
 * refusals, and the answer is undefined when there were any.
 */
export function readCommand(
  input: unknown,
  scope: Scope,
  errors: FormErrorsCollector,
  at: Path = [],
): CommandDefinition | undefined {
  if (!isObject(input)) {
    errors.add(at, FormErrors.modelType());
    return undefined;
  }
  const before = errors.entries.length;
  const type = readChoice(input['type'], COMMAND_TYPES, [...at, 'type'], errors) ?? T.ChatInput;
  const chatInputNames = type === T.ChatInput || type === T.PrimaryEntryPoint;
  const name = readName(input['name'], chatInputNames, [...at, 'name'], errors, true);
  const nameLocalizations = readLocalizations(
    input['name_localizations'],
    [...at, 'name_localizations'],
    errors,
    (v, p) => readName(v, chatInputNames, p, errors, true),
  );
  const describes = type !== T.User && type !== T.Message;
  let description = '';
  let descriptionLocalizations: Localizations = null;
  if (describes) {
    description =
      readText(input['description'], [...at, 'description'], errors, L.descriptionMaxLength) ?? '';
    descriptionLocalizations = readLocalizations(
      input['description_localizations'],
      [...at, 'description_localizations'],
      errors,
      (v, p) => readText(v, p, errors, L.descriptionMaxLength),
    );
  } else {
    // Context menu commands carry an empty description (docs); any other is refused.
    if (!absent(input['description']) && input['description'] !== '')
      errors.add([...at, 'description'], FormErrors.commandFieldNotAllowed());
    if (
      isObject(input['description_localizations']) &&
      Object.keys(input['description_localizations']).length
    )
      errors.add([...at, 'description_localizations'], FormErrors.commandFieldNotAllowed());
  }
  let options: Json[] | null = null;
  if (!absent(input['options'])) {
    if (type !== T.ChatInput) {
      if (!Array.isArray(input['options']) || input['options'].length > 0)
        errors.add([...at, 'options'], FormErrors.commandFieldNotAllowed());
    } else {
      options = readOptions(input['options'], 0, [...at, 'options'], errors);
    }
  }
  const handler = readHandler(input['handler'], type, [...at, 'handler'], errors);
  if (type === T.PrimaryEntryPoint && scope.guildId !== null)
    errors.add([...at, 'type'], FormErrors.commandEntryPointGuild());
  // An entry point launches the app's Activity: without Activities enabled there is nothing to launch.
  else if (type === T.PrimaryEntryPoint && scope.activities === false)
    errors.add([...at, 'type'], FormErrors.commandEntryPointActivities());
  const permissions = readPermissions(input, [...at, 'default_member_permissions'], errors);
  const dmPermission = readBoolean(input['dm_permission'], [...at, 'dm_permission'], errors);
  let contexts = readSet(input['contexts'], CONTEXTS, [...at, 'contexts'], errors);
  // The deprecated `dm_permission` only narrows the contexts when none are given: false leaves out BOT_DM.
  if (contexts === null && dmPermission === false)
    contexts = [InteractionContextTypes.Guild, InteractionContextTypes.PrivateChannel];
  const integrationTypes = readSet(
    input['integration_types'],
    INTEGRATION_TYPES,
    [...at, 'integration_types'],
    errors,
  );
  const nsfw = readBoolean(input['nsfw'], [...at, 'nsfw'], errors) ?? false;
  if (errors.entries.length > before || name === undefined) return undefined;
  const command: CommandDefinition = {
    type,
    name,
    name_localizations: nameLocalizations,
    description,
    description_localizations: descriptionLocalizations,
    options,
    default_member_permissions: permissions,
    // Contexts and install types only mean something for global commands (docs); guild ones keep none.
    contexts: scope.guildId === null ? contexts : null,
    integration_types: scope.guildId === null ? integrationTypes : null,
    nsfw,
    handler,
  };
  if (commandSize(command) > L.commandMaxSize) {
    errors.add(at, FormErrors.commandTooLarge(L.commandMaxSize));
    return undefined;
  }
  return command;
}

/** The fields of a stored command as a body, for an edit to apply its changes over. */
export function asBody(command: CommandDefinition): Json {
  return { ...command };
}

// ---- Fields ----

function readChoice(value: unknown, choices: readonly number[], path: Path, errors: FormErrorsCollector) {
  if (absent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    errors.add(path, FormErrors.integer(value));
    return undefined;
  }
  if (!choices.includes(value)) {
    errors.add(path, FormErrors.choices(choices));
    return undefined;
  }
  return value;
}

/** A name: 1–32 characters; CHAT_INPUT (and option) names follow the pattern in lowercase. */
function readName(
  value: unknown,
  chatInput: boolean,
  path: Path,
  errors: FormErrorsCollector,
  required: boolean,
): string | undefined {
  if (absent(value)) {
    if (required) errors.add(path, FormErrors.required());
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add(path, FormErrors.string(value));
    return undefined;
  }
  const length = [...value].length;
  if (length < L.nameMinLength || length > L.nameMaxLength) {
    errors.add(path, FormErrors.badLength(L.nameMinLength, L.nameMaxLength));
    return undefined;
  }
  if (
    chatInput ? !CHAT_INPUT_NAME_PATTERN.test(value) || value !== value.toLowerCase() : value.trim() === ''
  ) {
    errors.add(path, FormErrors.commandInvalidName());
    return undefined;
  }
  return value;
}

/** A required text of 1–`max` characters. */
function readText(value: unknown, path: Path, errors: FormErrorsCollector, max: number): string | undefined {
  if (absent(value)) {
    errors.add(path, FormErrors.required());
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add(path, FormErrors.string(value));
    return undefined;
  }
  const length = [...value].length;
  if (length < 1 || length > max) {
    errors.add(path, FormErrors.badLength(1, max));
    return undefined;
  }
  return value;
}

/** A localization dictionary: locale keys (docs: available locales), each value read by `readValue`. */
function readLocalizations(
  value: unknown,
  path: Path,
  errors: FormErrorsCollector,
  readValue: (value: unknown, path: Path) => string | undefined,
): Localizations {
  if (absent(value)) return null;
  if (!isObject(value)) {
    errors.add(path, FormErrors.object());
    return null;
  }
  const out: Record<string, string> = {};
  for (const [locale, text] of Object.entries(value)) {
    if (!LOCALES.has(locale)) {
      errors.add([...path, locale], FormErrors.localeInvalid(locale));
      continue;
    }
    const read = readValue(text, [...path, locale]);
    if (read !== undefined) out[locale] = read;
  }
  return out;
}

function readBoolean(value: unknown, path: Path, errors: FormErrorsCollector): boolean | undefined {
  if (absent(value)) return undefined;
  if (typeof value !== 'boolean') {
    errors.add(path, FormErrors.boolean());
    return undefined;
  }
  return value;
}

/** A list of distinct values out of `choices`, at least one; null when absent. */
function readSet(
  value: unknown,
  choices: readonly number[],
  path: Path,
  errors: FormErrorsCollector,
): number[] | null {
  if (absent(value)) return null;
  if (!Array.isArray(value)) {
    errors.add(path, FormErrors.array());
    return null;
  }
  if (value.length === 0) {
    errors.add(path, FormErrors.minItems(1));
    return null;
  }
  const out: number[] = [];
  value.forEach((item, index) => {
    const read = readChoice(item, choices, [...path, String(index)], errors);
    if (read === undefined) return;
    if (out.includes(read)) errors.add([...path, String(index)], FormErrors.setDuplicate());
    else out.push(read);
  });
  return out;
}

/**
 * `default_member_permissions`: a bitset as a decimal string (discord.js) or an integer (the reference);
 * null for everyone. The deprecated `default_permission: false` means "0" when no bitset is given.
 */
function readPermissions(input: Json, path: Path, errors: FormErrorsCollector): string | null {
  const value = input['default_member_permissions'];
  if (value === undefined && input['default_permission'] === false) return '0';
  if (absent(value)) return null;
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,20}$/.test(text) || (BigInt(text) & ~ALL_PERMISSIONS) !== 0n) {
    errors.add(path, FormErrors.integer(value));
    return null;
  }
  return BigInt(text).toString();
}

/** `handler` belongs to PRIMARY_ENTRY_POINT commands, which need one. */
function readHandler(value: unknown, type: number, path: Path, errors: FormErrorsCollector): number | null {
  if (type !== T.PrimaryEntryPoint) {
    if (!absent(value)) errors.add(path, FormErrors.commandFieldNotAllowed());
    return null;
  }
  if (absent(value)) {
    errors.add(path, FormErrors.required());
    return null;
  }
  return readChoice(value, HANDLERS, path, errors) ?? null;
}

// ---- Options ----

/**
 * A list of options at `depth` (0: the command's, 1: a group's or a subcommand's, 2: a grouped subcommand's).
 * Subcommands and groups stand only at the top, groups hold only subcommands, and parameters never sit
 * beside them; names are unique; required parameters come first.
 */
function readOptions(value: unknown, depth: number, path: Path, errors: FormErrorsCollector): Json[] | null {
  if (!Array.isArray(value)) {
    errors.add(path, FormErrors.array());
    return null;
  }
  if (value.length > L.optionsMax) {
    errors.add(path, FormErrors.maxItems(L.optionsMax));
    return null;
  }
  const out: Json[] = [];
  const names = new Set<string>();
  let nesting: boolean | undefined;
  let optionalSeen = false;
  value.forEach((raw, index) => {
    const at = [...path, String(index)];
    const option = readOption(raw, depth, at, errors);
    if (!option) return;
    const nests = NESTING_TYPES.includes(option['type'] as number);
    if (nesting !== undefined && nests !== nesting)
      errors.add([...at, 'type'], FormErrors.commandOptionsNesting());
    nesting ??= nests;
    const name = option['name'] as string;
    if (names.has(name)) errors.add([...at, 'name'], FormErrors.commandOptionNameDuplicated(name));
    names.add(name);
    if (option['required'] === true && optionalSeen)
      errors.add(path, FormErrors.commandOptionsRequiredOrder());
    if (option['required'] !== true && !nests) optionalSeen = true;
    out.push(option);
  });
  return out;
}

function readOption(raw: unknown, depth: number, path: Path, errors: FormErrorsCollector): Json | undefined {
  if (!isObject(raw)) {
    errors.add(path, FormErrors.modelType());
    return undefined;
  }
  const before = errors.entries.length;
  const field = (name: string) => [...path, name];
  if (absent(raw['type'])) errors.add(field('type'), FormErrors.required());
  const type = readChoice(raw['type'], OPTION_TYPES, field('type'), errors);
  const name = readName(raw['name'], true, field('name'), errors, true);
  const nameLocalizations = readLocalizations(
    raw['name_localizations'],
    field('name_localizations'),
    errors,
    (v, p) => readName(v, true, p, errors, true),
  );
  const description = readText(raw['description'], field('description'), errors, L.descriptionMaxLength);
  const descriptionLocalizations = readLocalizations(
    raw['description_localizations'],
    field('description_localizations'),
    errors,
    (v, p) => readText(v, p, errors, L.descriptionMaxLength),
  );
  if (type === undefined || name === undefined || description === undefined) return undefined;
  const option: Json = { type, name };
  if (nameLocalizations) option['name_localizations'] = nameLocalizations;
  option['description'] = description;
  if (descriptionLocalizations) option['description_localizations'] = descriptionLocalizations;
  const nests = NESTING_TYPES.includes(type);
  // Groups stand at the top only; subcommands at the top or in a group.
  const misplaced = (type === O.SubcommandGroup && depth > 0) || (type === O.Subcommand && depth > 1);
  if (misplaced) errors.add(field('type'), FormErrors.commandOptionsNesting());
  const required = readBoolean(raw['required'], field('required'), errors);
  if (required !== undefined && nests) errors.add(field('required'), FormErrors.commandFieldNotAllowed());
  else if (required) option['required'] = true;
  readParameterFields(raw, type, path, errors, option);
  // A misplaced group or subcommand is refused as a whole: what it holds is not read.
  if (!absent(raw['options']) && !misplaced) {
    if (!nests) errors.add(field('options'), FormErrors.commandFieldNotAllowed());
    else {
      const nested = readOptions(raw['options'], depth + 1, field('options'), errors);
      if (nested && type === O.SubcommandGroup && nested.some((o) => o['type'] !== O.Subcommand))
        errors.add(field('options'), FormErrors.commandOptionsNesting());
      if (nested) option['options'] = nested;
    }
  } else if (nests) {
    option['options'] = [];
  }
  return errors.entries.length > before ? undefined : option;
}

/** Choices, autocomplete, value and length bounds, channel types: each only on the types that take it. */
function readParameterFields(raw: Json, type: number, path: Path, errors: FormErrorsCollector, option: Json) {
  const field = (name: string) => [...path, name];
  const notAllowed = (name: string) => {
    if (!absent(raw[name])) errors.add(field(name), FormErrors.commandFieldNotAllowed());
  };
  if (CHOICE_TYPES.includes(type)) {
    const choices = absent(raw['choices'])
      ? undefined
      : readChoices(raw['choices'], type, field('choices'), errors);
    const autocomplete = readBoolean(raw['autocomplete'], field('autocomplete'), errors);
    if (autocomplete && choices && choices.length > 0)
      errors.add(field('autocomplete'), FormErrors.commandAutocompleteWithChoices());
    if (choices && choices.length > 0) option['choices'] = choices;
    if (autocomplete) option['autocomplete'] = true;
  } else {
    notAllowed('choices');
    if (raw['autocomplete'] === true) errors.add(field('autocomplete'), FormErrors.commandFieldNotAllowed());
  }
  if (type === O.Integer || type === O.Number) {
    const integer = type === O.Integer;
    const max = integer ? L.integerMax : L.numberMax;
    const min = readBound(raw['min_value'], integer, -max, max, field('min_value'), errors);
    const top = readBound(raw['max_value'], integer, -max, max, field('max_value'), errors);
    if (min !== undefined && top !== undefined && min > top)
      errors.add(field('min_value'), FormErrors.commandRangeInvalid());
    if (min !== undefined) option['min_value'] = min;
    if (top !== undefined) option['max_value'] = top;
  } else {
    notAllowed('min_value');
    notAllowed('max_value');
  }
  if (type === O.String) {
    const min = readBound(raw['min_length'], true, 0, L.stringLengthMax, field('min_length'), errors);
    const max = readBound(raw['max_length'], true, 1, L.stringLengthMax, field('max_length'), errors);
    if (min !== undefined && max !== undefined && min > max)
      errors.add(field('min_length'), FormErrors.commandRangeInvalid());
    if (min !== undefined) option['min_length'] = min;
    if (max !== undefined) option['max_length'] = max;
  } else {
    notAllowed('min_length');
    notAllowed('max_length');
  }
  if (type === O.Channel) {
    const channelTypes = readSet(raw['channel_types'], CHANNEL_TYPES, field('channel_types'), errors);
    if (channelTypes) option['channel_types'] = channelTypes;
  } else {
    notAllowed('channel_types');
  }
}

function readBound(
  value: unknown,
  integer: boolean,
  min: number,
  max: number,
  path: Path,
  errors: FormErrorsCollector,
): number | undefined {
  if (absent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    errors.add(path, integer ? FormErrors.integer(value) : FormErrors.number(value));
    return undefined;
  }
  if (value < min) errors.add(path, FormErrors.minimum(min));
  else if (value > max) errors.add(path, FormErrors.maximum(max));
  else return value;
  return undefined;
}

/** Up to 25 choices; a STRING choice's value is text of at most 100, an INTEGER's an integer. */
function readChoices(
  value: unknown,
  type: number,
  path: Path,
  errors: FormErrorsCollector,
): Json[] | undefined {
  if (!Array.isArray(value)) {
    errors.add(path, FormErrors.array());
    return undefined;
  }
  if (value.length > L.choicesMax) {
    errors.add(path, FormErrors.maxItems(L.choicesMax));
    return undefined;
  }
  const out: Json[] = [];
  value.forEach((raw, index) => {
    const at = [...path, String(index)];
    if (!isObject(raw)) {
      errors.add(at, FormErrors.modelType());
      return;
    }
    const name = readText(raw['name'], [...at, 'name'], errors, L.choiceNameMaxLength);
    const nameLocalizations = readLocalizations(
      raw['name_localizations'],
      [...at, 'name_localizations'],
      errors,
      (v, p) => readText(v, p, errors, L.choiceNameMaxLength),
    );
    const choiceValue = readChoiceValue(raw['value'], type, [...at, 'value'], errors);
    if (name === undefined || choiceValue === undefined) return;
    out.push({
      name,
      ...(nameLocalizations ? { name_localizations: nameLocalizations } : {}),
      value: choiceValue,
    });
  });
  return out;
}

function readChoiceValue(value: unknown, type: number, path: Path, errors: FormErrorsCollector) {
  if (absent(value)) {
    errors.add(path, FormErrors.required());
    return undefined;
  }
  if (type === O.String) return readText(value, path, errors, L.choiceStringValueMaxLength);
  const max = type === O.Integer ? L.integerMax : L.numberMax;
  return readBound(value, type === O.Integer, -max, max, path, errors);
}

// ---- Size ----

/**
 * Characters of names, descriptions, choice names and values (docs: 8000); of a localized field only its
 * longest text (the default included) counts.
 */
export function commandSize(command: CommandDefinition): number {
  let size = textSize(command.name, command.name_localizations);
  size += textSize(command.description, command.description_localizations);
  const stack: Json[] = [...(command.options ?? [])];
  for (let option = stack.pop(); option !== undefined; option = stack.pop()) {
    size += textSize(option['name'], option['name_localizations']);
    size += textSize(option['description'], option['description_localizations']);
    for (const choice of (option['choices'] as Json[] | undefined) ?? []) {
      size += textSize(choice['name'], choice['name_localizations']) + [...String(choice['value'])].length;
    }
    stack.push(...((option['options'] as Json[] | undefined) ?? []));
  }
  return size;
}

function textSize(text: unknown, localizations: unknown): number {
  let size = [...String(text ?? '')].length;
  if (isObject(localizations))
    for (const value of Object.values(localizations)) size = Math.max(size, [...String(value)].length);
  return size;
}
