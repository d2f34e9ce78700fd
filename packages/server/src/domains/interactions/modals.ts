import { ComponentTypes, FormErrors, InteractionLimits, TextInputStyles } from '@hearth/protocol';
import { type TSchema, Type } from 'typebox';
import { type FieldPath, FormBody } from '../channel-messages/form-body.js';

/**
 * Modals (DOCS components reference; seed: Limits, Versioning): top-level `label` components (18) holding a
 * text input, a select or a file upload, and text displays (10); the deprecated action row (1) holding one
 * text input is still accepted. The modal is kept as shown, and a user's submission is checked against it.
 */

type Json = Record<string, unknown>;

const CustomId = Type.String({ minLength: 1, maxLength: InteractionLimits.customIdMax });
const Id = Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }));
const Values = Type.Integer({
  minimum: InteractionLimits.fileUploadValuesMin,
  maximum: InteractionLimits.fileUploadValuesMax,
});

const TextInput = Type.Object({
  type: Type.Literal(ComponentTypes.TextInput),
  id: Id,
  custom_id: CustomId,
  style: Type.Union([Type.Literal(TextInputStyles.Short), Type.Literal(TextInputStyles.Paragraph)]),
  /** Deprecated inside a label (the label's own text is shown); required in the old action-row layout. */
  label: Type.Optional(Type.String({ minLength: 1, maxLength: InteractionLimits.textInputLabelMax })),
  min_length: Type.Optional(Type.Integer({ minimum: 0, maximum: InteractionLimits.textInputValueMax })),
  max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: InteractionLimits.textInputValueMax })),
  required: Type.Optional(Type.Boolean()),
  value: Type.Optional(Type.String({ maxLength: InteractionLimits.textInputValueMax })),
  placeholder: Type.Optional(Type.String({ maxLength: 100 })),
});

const StringSelect = Type.Object({
  type: Type.Literal(ComponentTypes.StringSelect),
  id: Id,
  custom_id: CustomId,
  options: Type.Array(
    Type.Object({
      label: Type.String({ minLength: 1, maxLength: 100 }),
      value: Type.String({ minLength: 1, maxLength: 100 }),
      description: Type.Optional(Type.String({ maxLength: 100 })),
      default: Type.Optional(Type.Boolean()),
    }),
    { minItems: 1, maxItems: 25 },
  ),
  placeholder: Type.Optional(Type.String({ maxLength: 150 })),
  min_values: Type.Optional(Type.Integer({ minimum: 0, maximum: 25 })),
  max_values: Type.Optional(Type.Integer({ minimum: 1, maximum: 25 })),
  required: Type.Optional(Type.Boolean()),
});

const AutoSelect = Type.Object({
  type: Type.Integer(),
  id: Id,
  custom_id: CustomId,
  placeholder: Type.Optional(Type.String({ maxLength: 150 })),
  min_values: Type.Optional(Type.Integer({ minimum: 0, maximum: 25 })),
  max_values: Type.Optional(Type.Integer({ minimum: 1, maximum: 25 })),
  required: Type.Optional(Type.Boolean()),
});

/** The file upload component: `min_values` and `max_values` between 0 and 10 (seed: Limits). */
const FileUpload = Type.Object({
  type: Type.Literal(ComponentTypes.FileUpload),
  id: Id,
  custom_id: CustomId,
  min_values: Type.Optional(Values),
  max_values: Type.Optional(Values),
  required: Type.Optional(Type.Boolean()),
});

const TextDisplay = Type.Object({
  type: Type.Literal(ComponentTypes.TextDisplay),
  id: Id,
  content: Type.String({ minLength: 1, maxLength: 4000 }),
});

const Label = Type.Object({
  type: Type.Literal(ComponentTypes.Label),
  id: Id,
  label: Type.String({ minLength: 1, maxLength: InteractionLimits.labelMax }),
  description: Type.Optional(Type.String({ maxLength: InteractionLimits.labelDescriptionMax })),
  component: Type.Record(Type.String(), Type.Unknown()),
});

const ActionRow = Type.Object({
  type: Type.Literal(ComponentTypes.ActionRow),
  id: Id,
  components: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});

const IN_LABEL: Readonly<Record<number, TSchema>> = {
  [ComponentTypes.TextInput]: TextInput,
  [ComponentTypes.StringSelect]: StringSelect,
  [ComponentTypes.UserSelect]: AutoSelect,
  [ComponentTypes.RoleSelect]: AutoSelect,
  [ComponentTypes.MentionableSelect]: AutoSelect,
  [ComponentTypes.ChannelSelect]: AutoSelect,
  [ComponentTypes.FileUpload]: FileUpload,
};
const TOP = [ComponentTypes.Label, ComponentTypes.TextDisplay, ComponentTypes.ActionRow];

/** Checks a modal's components (50035 with every bad field); answers them with ids numbered as sent. */
export function parseModalComponents(components: readonly unknown[]): Json[] {
  const form = new FormBody();
  const customIds = new Set<string>();
  const out: Json[] = [];
  let next = 1;
  const numbered = (node: Json): Json => ({
    ...node,
    id: typeof node['id'] === 'number' && node['id'] > 0 ? node['id'] : next++,
  });
  const input = (
    node: unknown,
    path: FieldPath,
    allowed: Readonly<Record<number, TSchema>>,
  ): Json | undefined => {
    const type = (node as { type?: unknown } | null)?.type;
    const schema = typeof type === 'number' ? allowed[type] : undefined;
    if (!schema) {
      form.add(path, FormErrors.unionTypeChoices(Object.keys(allowed).map(Number)));
      return undefined;
    }
    if (!form.check(schema, node, path)) return undefined;
    const component = node as Json;
    const customId = component['custom_id'] as string;
    if (customIds.has(customId)) form.add([...path, 'custom_id'], FormErrors.componentCustomIdDuplicated());
    customIds.add(customId);
    const min = component['min_values'] as number | undefined;
    const max = component['max_values'] as number | undefined;
    if (min !== undefined && max !== undefined && min > max)
      form.add([...path, 'min_values'], FormErrors.maximum(max));
    const minLength = component['min_length'] as number | undefined;
    const maxLength = component['max_length'] as number | undefined;
    if (minLength !== undefined && maxLength !== undefined && minLength > maxLength)
      form.add([...path, 'min_length'], FormErrors.maximum(maxLength));
    return numbered(component);
  };
  components.forEach((node, index) => {
    const path: FieldPath = ['data', 'components', index];
    const type = (node as { type?: unknown } | null)?.type;
    if (type === ComponentTypes.Label) {
      if (!form.check(Label, node, path)) return;
      const label = numbered(node as Json);
      const inner = input(label['component'], [...path, 'component'], IN_LABEL);
      if (inner) out.push({ ...label, component: inner });
    } else if (type === ComponentTypes.TextDisplay) {
      if (form.check(TextDisplay, node, path)) out.push(numbered(node as Json));
    } else if (type === ComponentTypes.ActionRow) {
      // The deprecated layout (seed: Versioning): one text input, which carries its own label.
      if (!form.check(ActionRow, node, path)) return;
      const row = numbered(node as Json);
      const children = row['components'] as unknown[];
      form.checkLength(children, 1, 1, [...path, 'components']);
      const inner = input(children[0], [...path, 'components', 0], { [ComponentTypes.TextInput]: TextInput });
      if (inner && inner['label'] === undefined)
        form.add([...path, 'components', 0, 'label'], FormErrors.required());
      if (inner) out.push({ ...row, components: [inner] });
    } else {
      form.add(path, FormErrors.unionTypeChoices(TOP));
    }
  });
  form.throwIfAny();
  return out;
}

/** One answered field of a submission: a text input's value, or a select's or upload's values. */
interface Answer {
  value?: unknown;
  values?: unknown;
}

/** The fields of a modal, each with where it stands: inside a label, or in an old action row. */
function* fieldsOf(components: readonly Json[]): Generator<{ field: Json; top: Json }> {
  for (const top of components) {
    if (top['type'] === ComponentTypes.Label) yield { field: top['component'] as Json, top };
    if (top['type'] === ComponentTypes.ActionRow)
      for (const field of top['components'] as Json[]) yield { field, top };
  }
}

/** What the user answered, by custom id, wherever in their components it stands. */
function answersOf(components: readonly unknown[]): Map<string, Answer> {
  const answers = new Map<string, Answer>();
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    const component = node as Json;
    if (typeof component['custom_id'] === 'string') answers.set(component['custom_id'], component as Answer);
    if (Array.isArray(component['components'])) for (const child of component['components']) visit(child);
    if (component['component'] !== undefined) visit(component['component']);
  };
  for (const node of components) visit(node);
  return answers;
}

/** A submission checked against the modal as shown; `files` are the `files[n]` the request carried. */
export interface Submission {
  /** The components as the app receives them (discord.js reads this shape). */
  components: Json[];
  /** Indexes of `files[n]` each upload field names, by custom id. */
  uploads: Map<string, number[]>;
}

/**
 * Checks a user's answers against the modal as shown: every field answered is the modal's, required fields
 * are answered, lengths and counts hold, selected options exist, and uploads name files of the request.
 */
export function checkSubmission(
  shown: readonly Json[],
  submitted: readonly unknown[],
  files: ReadonlySet<number>,
): Submission {
  const form = new FormBody();
  const answers = answersOf(submitted);
  const known = new Set<string>();
  const uploads = new Map<string, number[]>();
  const answered = new Map<string, Json>();
  let index = 0;
  for (const { field } of fieldsOf(shown)) {
    const customId = field['custom_id'] as string;
    known.add(customId);
    const path: FieldPath = ['data', 'components', index++];
    const answer = answers.get(customId);
    const required = field['required'] !== false;
    if (field['type'] === ComponentTypes.TextInput) {
      const value = answer?.value ?? '';
      if (typeof value !== 'string') {
        form.add([...path, 'value'], FormErrors.string(value));
        continue;
      }
      const min = (field['min_length'] as number | undefined) ?? 0;
      const max = (field['max_length'] as number | undefined) ?? InteractionLimits.textInputValueMax;
      if (value.length === 0 && required) form.add([...path, 'value'], FormErrors.required());
      else if (value.length > 0 && (value.length < min || value.length > max))
        form.add([...path, 'value'], FormErrors.badLength(min, max));
      answered.set(customId, { type: field['type'], id: field['id'], custom_id: customId, value });
      continue;
    }
    const values = answer?.values ?? [];
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) {
      form.add([...path, 'values'], FormErrors.array());
      continue;
    }
    const isUpload = field['type'] === ComponentTypes.FileUpload;
    const min = (field['min_values'] as number | undefined) ?? (required ? 1 : 0);
    const max =
      (field['max_values'] as number | undefined) ?? (isUpload ? InteractionLimits.fileUploadValuesMax : 1);
    if (values.length < min || values.length > max)
      form.add([...path, 'values'], FormErrors.badLength(min, max));
    if (field['type'] === ComponentTypes.StringSelect) {
      const options = new Set((field['options'] as { value: string }[]).map((option) => option.value));
      for (const value of values)
        if (!options.has(value)) form.add([...path, 'values'], FormErrors.invalid());
    }
    if (isUpload) {
      const indexes = values.map(Number);
      if (!values.every((v) => /^\d{1,9}$/.test(v) && files.has(Number(v))))
        form.add([...path, 'values'], FormErrors.invalid());
      uploads.set(customId, indexes);
    }
    answered.set(customId, { type: field['type'], id: field['id'], custom_id: customId, values });
  }
  for (const customId of answers.keys())
    if (!known.has(customId)) form.add(['data', 'components'], FormErrors.invalid());
  form.throwIfAny();
  // Text displays are returned with their id only; fields carry what the user gave.
  const components = shown.map((top): Json => {
    if (top['type'] === ComponentTypes.Label) {
      const field = top['component'] as Json;
      return { type: top['type'], id: top['id'], component: answered.get(field['custom_id'] as string) };
    }
    if (top['type'] === ComponentTypes.ActionRow) {
      return {
        type: top['type'],
        id: top['id'],
        components: (top['components'] as Json[]).map((field) => answered.get(field['custom_id'] as string)),
      };
    }
    return { type: top['type'], id: top['id'] };
  });
  return { components, uploads };
}
