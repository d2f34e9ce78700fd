import {
  ATTACHMENT_URL_PREFIX,
  BUTTON_URL_SCHEMES,
  ButtonStyles,
  ChannelTypes,
  ComponentLimits,
  ComponentTypes,
  FormErrors,
  MEDIA_URL_SCHEMES,
  MessageFlags,
  SELECT_DEFAULT_VALUE_TYPES,
  SeparatorSpacing,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';
import { type FieldPath, FormBody, schemeOf } from './form-body.js';

/**
 * Message components (GUILDS.md §5; OAS `*ComponentForMessageRequest`; seed Limits "components"): the
 * tree a create or edit carries, checked node by node so a bad one answers under its own path
 * (`components.0.components.2`), and the stored tree with the defaults and `id`s the platform fills in.
 * Legacy messages hold at most 5 action rows; IS_COMPONENTS_V2 messages any layout components, 40 in all.
 */

// ---- Request shapes, one per component type (children are checked by the walk, not by the schema) ----

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const Choice = (values: readonly number[]) => Type.Unsafe<number>({ type: 'integer', enum: [...values] });
const Snowflake = Type.String({ format: 'snowflake' });
/** Child lists bounded on both sides are measured by the walk (FormBody.checkLength), for their wording. */
const Children = Type.Array(Type.Unknown());

const base = {
  type: Type.Integer(),
  id: Optional(Type.Integer({ minimum: 0, maximum: ComponentLimits.componentIdMax })),
};
const CustomId = Type.String({ minLength: 1, maxLength: ComponentLimits.customId });
const Emoji = Type.Object({
  id: Optional(Snowflake),
  name: Optional(Type.String({ maxLength: ComponentLimits.emojiName })),
  animated: Optional(Type.Boolean()),
});
const Media = Type.Object({ url: Type.String({ maxLength: ComponentLimits.mediaUrl, format: 'uri' }) });
const MediaDescription = Type.String({ minLength: 1, maxLength: ComponentLimits.mediaDescription });
const selectFields = {
  ...base,
  custom_id: CustomId,
  placeholder: Optional(Type.String({ maxLength: ComponentLimits.selectPlaceholder })),
  min_values: Optional(Type.Integer({ minimum: 0, maximum: ComponentLimits.selectMinValuesMax })),
  max_values: Optional(Type.Integer({ minimum: 1, maximum: ComponentLimits.selectMaxValuesMax })),
  disabled: Optional(Type.Boolean()),
};
const DefaultValues = Type.Array(Type.Object({ id: Snowflake, type: Type.String() }), {
  maxItems: ComponentLimits.selectMaxValuesMax,
});

const ActionRowRequest = Type.Object({
  ...base,
  components: Children,
});
const ButtonRequest = Type.Object({
  ...base,
  style: Choice(Object.values(ButtonStyles)),
  label: Optional(Type.String({ maxLength: ComponentLimits.buttonLabel })),
  emoji: Optional(Emoji),
  custom_id: Optional(CustomId),
  url: Optional(Type.String({ maxLength: ComponentLimits.buttonUrl, format: 'uri' })),
  sku_id: Optional(Snowflake),
  disabled: Optional(Type.Boolean()),
});
const StringSelectRequest = Type.Object({
  ...selectFields,
  options: Type.Array(
    Type.Object({
      label: Type.String({ minLength: 1, maxLength: ComponentLimits.selectOptionLabel }),
      value: Type.String({ minLength: 1, maxLength: ComponentLimits.selectOptionValue }),
      description: Optional(Type.String({ maxLength: ComponentLimits.selectOptionDescription })),
      emoji: Optional(Emoji),
      default: Optional(Type.Boolean()),
    }),
  ),
});
const AutoSelectRequest = Type.Object({ ...selectFields, default_values: Optional(DefaultValues) });
const ChannelSelectRequest = Type.Object({
  ...selectFields,
  default_values: Optional(DefaultValues),
  channel_types: Optional(Type.Array(Choice(Object.values(ChannelTypes)), { uniqueItems: true })),
});
const SectionRequest = Type.Object({
  ...base,
  components: Children,
  accessory: Type.Unknown(),
});
const TextDisplayRequest = Type.Object({
  ...base,
  content: Type.String({ minLength: 1, maxLength: ComponentLimits.textDisplayContent }),
});
const ThumbnailRequest = Type.Object({
  ...base,
  media: Media,
  description: Optional(MediaDescription),
  spoiler: Optional(Type.Boolean()),
});
const MediaGalleryRequest = Type.Object({
  ...base,
  items: Type.Array(
    Type.Object({ media: Media, description: Optional(MediaDescription), spoiler: Optional(Type.Boolean()) }),
  ),
});
const FileRequest = Type.Object({ ...base, file: Media, spoiler: Optional(Type.Boolean()) });
const SeparatorRequest = Type.Object({
  ...base,
  spacing: Optional(Choice(Object.values(SeparatorSpacing))),
  divider: Optional(Type.Boolean()),
});
const ContainerRequest = Type.Object({
  ...base,
  accent_color: Optional(Type.Integer({ minimum: 0, maximum: 0xffffff })),
  spoiler: Optional(Type.Boolean()),
  components: Type.Array(Type.Unknown(), { minItems: 1 }),
});

// ---- Stored shapes (OAS `*ComponentResponse`) ----

export type ComponentEmoji = {
  id?: string;
  name: string;
  animated?: boolean;
};
export type UnfurledMedia = {
  id: string;
  url: string;
  proxy_url: string;
  width: number | null;
  height: number | null;
  content_type: string | null;
  attachment_id?: string;
};
export type ActionRow = {
  type: typeof ComponentTypes.ActionRow;
  id: number;
  components: (Button | SelectMenu)[];
};
export type Button = {
  type: typeof ComponentTypes.Button;
  id: number;
  style: number;
  label?: string;
  emoji?: ComponentEmoji;
  custom_id?: string;
  url?: string;
  sku_id?: string;
  disabled?: boolean;
};
export type SelectMenu = {
  type: number;
  id: number;
  custom_id: string;
  placeholder?: string;
  min_values: number;
  max_values: number;
  disabled?: boolean;
  options?: {
    label: string;
    value: string;
    description?: string;
    emoji?: ComponentEmoji;
    default?: boolean;
  }[];
  default_values?: { id: string; type: string }[];
  channel_types?: number[];
};
export type Section = {
  type: typeof ComponentTypes.Section;
  id: number;
  components: TextDisplay[];
  accessory: Button | Thumbnail;
};
export type TextDisplay = {
  type: typeof ComponentTypes.TextDisplay;
  id: number;
  content: string;
};
export type Thumbnail = {
  type: typeof ComponentTypes.Thumbnail;
  id: number;
  media: UnfurledMedia;
  description: string | null;
  spoiler: boolean;
};
export type MediaGallery = {
  type: typeof ComponentTypes.MediaGallery;
  id: number;
  items: { media: UnfurledMedia; description: string | null; spoiler: boolean }[];
};
export type FileComponent = {
  type: typeof ComponentTypes.File;
  id: number;
  file: UnfurledMedia;
  name: string | null;
  size: number | null;
  spoiler: boolean;
};
export type Separator = {
  type: typeof ComponentTypes.Separator;
  id: number;
  spacing: number;
  divider: boolean;
};
export type Container = {
  type: typeof ComponentTypes.Container;
  id: number;
  accent_color: number | null;
  spoiler: boolean;
  components: (ActionRow | Section | TextDisplay | MediaGallery | FileComponent | Separator)[];
};
export type Component =
  | ActionRow
  | Button
  | SelectMenu
  | Section
  | TextDisplay
  | Thumbnail
  | MediaGallery
  | FileComponent
  | Separator
  | Container;

/** An upload of the same message that a file component or a media item names as `attachment://<filename>`. */
export interface ComponentAttachment {
  readonly id: string;
  readonly filename: string;
  readonly url: string;
  readonly proxy_url: string;
  readonly size: number;
  readonly content_type?: string | null | undefined;
  readonly width?: number | null | undefined;
  readonly height?: number | null | undefined;
}

/** Reads the attachment objects of a message (stored JSON) as the references components resolve. */
export function componentAttachmentsOf(objects: readonly Record<string, unknown>[]): ComponentAttachment[] {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const int = (value: unknown) => (typeof value === 'number' ? value : null);
  return objects.map((a) => ({
    id: text(a['id']),
    filename: text(a['filename']),
    url: text(a['url']),
    proxy_url: text(a['proxy_url']),
    size: int(a['size']) ?? 0,
    content_type: typeof a['content_type'] === 'string' ? a['content_type'] : null,
    width: int(a['width']),
    height: int(a['height']),
  }));
}

export interface ComponentsContext {
  /** Whether the message carries IS_COMPONENTS_V2 once this create or edit applies. */
  readonly componentsV2: boolean;
  /** The message's uploads, for `attachment://` references. */
  readonly attachments: readonly ComponentAttachment[];
  /** A new snowflake, for the unfurled media the platform gives an id. */
  readonly newId: () => string;
}

/** Whether a message's flags make it a Components V2 message. */
export function isComponentsV2(flags: number): boolean {
  return (flags & MessageFlags.IsComponentsV2) !== 0;
}

const SELECT_TYPES: readonly number[] = [
  ComponentTypes.StringSelect,
  ComponentTypes.UserSelect,
  ComponentTypes.RoleSelect,
  ComponentTypes.MentionableSelect,
  ComponentTypes.ChannelSelect,
];
/** Where each component type may stand (the platform answers any other with UNION_TYPE_CHOICES). */
const PLACES = {
  legacyTop: [ComponentTypes.ActionRow],
  v2Top: [
    ComponentTypes.ActionRow,
    ComponentTypes.Section,
    ComponentTypes.TextDisplay,
    ComponentTypes.MediaGallery,
    ComponentTypes.File,
    ComponentTypes.Separator,
    ComponentTypes.Container,
  ],
  actionRow: [ComponentTypes.Button, ...SELECT_TYPES],
  container: [
    ComponentTypes.ActionRow,
    ComponentTypes.Section,
    ComponentTypes.TextDisplay,
    ComponentTypes.MediaGallery,
    ComponentTypes.File,
    ComponentTypes.Separator,
  ],
  sectionText: [ComponentTypes.TextDisplay],
  sectionAccessory: [ComponentTypes.Button, ComponentTypes.Thumbnail],
} as const satisfies Record<string, readonly number[]>;

/**
 * Validates `components` of a create or edit body and returns the tree to store, every component with its
 * `id` (the sender's, or the next free one in tree order, as the platform numbers them).
 */
export function parseComponents(value: unknown, context: ComponentsContext): Component[] {
  if (value === undefined || value === null) return [];
  const form = new FormBody();
  if (!Array.isArray(value)) {
    form.add(['components'], FormErrors.array());
    form.throwIfAny();
  }
  const tree = new ComponentTree(form, context);
  const components = tree.parseList(value as unknown[], ['components'], topPlaces(context));
  if (context.componentsV2) {
    if (tree.count > ComponentLimits.componentsV2Total) {
      form.add(['components'], FormErrors.maxItems(ComponentLimits.componentsV2Total));
    }
  } else if ((value as unknown[]).length > ComponentLimits.legacyActionRows) {
    form.add(['components'], FormErrors.maxItems(ComponentLimits.legacyActionRows));
  }
  form.throwIfAny();
  tree.assignIds(components);
  return components;
}

function topPlaces(context: ComponentsContext): readonly number[] {
  return context.componentsV2 ? PLACES.v2Top : PLACES.legacyTop;
}

/** A message flagged IS_COMPONENTS_V2 carries only components: the other content fields answer 50035. */
export interface ComponentsV2Fields {
  readonly content?: string | null | undefined;
  readonly embeds?: readonly unknown[] | null | undefined;
  readonly sticker_ids?: readonly unknown[] | null | undefined;
  readonly poll?: unknown;
}

/**
 * Checks a message that carries IS_COMPONENTS_V2 once the create or edit applies (GUILDS.md §4.3): no
 * content, embeds, stickers or poll. The flag itself is never cleared (the edit keeps it, service.ts).
 */
export function checkComponentsV2Message(flags: number, fields: ComponentsV2Fields): void {
  const form = new FormBody();
  if (isComponentsV2(flags)) {
    if (fields.content) form.add(['content'], FormErrors.componentsV2LegacyField('content'));
    for (const field of ['embeds', 'sticker_ids'] as const) {
      const list = fields[field];
      if (list && list.length > 0) form.add([field], FormErrors.componentsV2LegacyField(field));
    }
    if (fields.poll !== undefined && fields.poll !== null) {
      form.add(['poll'], FormErrors.componentsV2LegacyField('poll'));
    }
  }
  form.throwIfAny();
}

/** One walk over a request's component tree: it checks each node, counts them, and gathers the ids. */
class ComponentTree {
  readonly #form: FormBody;
  readonly #context: ComponentsContext;
  readonly #customIds = new Set<string>();
  readonly #ids = new Set<number>();
  count = 0;

  constructor(form: FormBody, context: ComponentsContext) {
    this.#form = form;
    this.#context = context;
  }

  parseList<T extends Component>(
    values: readonly unknown[],
    path: FieldPath,
    places: readonly number[],
  ): T[] {
    const out: T[] = [];
    values.forEach((value, index) => {
      const component = this.parse(value, [...path, index], places);
      if (component) out.push(component as T);
    });
    return out;
  }

  /** Checks one node where `places` may stand and builds its stored form (undefined when it is bad). */
  parse(value: unknown, path: FieldPath, places: readonly number[]): Component | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.#form.add(path, FormErrors.object());
      return undefined;
    }
    const type = (value as { type?: unknown }).type;
    if (typeof type !== 'number' || !places.includes(type)) {
      this.#form.add(path, FormErrors.unionTypeChoices(places));
      return undefined;
    }
    this.count++;
    const schema = SCHEMAS[type];
    if (!schema || !this.#form.check(schema, value, path)) return undefined;
    const id = this.#claimId((value as { id?: number | null }).id, path);
    switch (type) {
      case ComponentTypes.ActionRow:
        return this.#actionRow(value as Static<typeof ActionRowRequest>, id, path);
      case ComponentTypes.Button:
        return this.#button(value as Static<typeof ButtonRequest>, id, path);
      case ComponentTypes.StringSelect:
        return this.#stringSelect(value as Static<typeof StringSelectRequest>, id, path);
      case ComponentTypes.Section:
        return this.#section(value as Static<typeof SectionRequest>, id, path);
      case ComponentTypes.TextDisplay:
        return { type, id, content: (value as Static<typeof TextDisplayRequest>).content };
      case ComponentTypes.Thumbnail:
        return this.#thumbnail(value as Static<typeof ThumbnailRequest>, id, path);
      case ComponentTypes.MediaGallery:
        return this.#mediaGallery(value as Static<typeof MediaGalleryRequest>, id, path);
      case ComponentTypes.File:
        return this.#file(value as Static<typeof FileRequest>, id, path);
      case ComponentTypes.Separator:
        return this.#separator(value as Static<typeof SeparatorRequest>, id);
      case ComponentTypes.Container:
        return this.#container(value as Static<typeof ContainerRequest>, id, path);
      default:
        return this.#autoSelect(value as Static<typeof ChannelSelectRequest>, type, id, path);
    }
  }

  /** Numbers every component the sender left without an `id`, skipping the ids the sender chose. */
  assignIds(components: readonly Component[]): void {
    let next = 1;
    for (const component of walk(components)) {
      if (component.id !== 0) continue;
      while (this.#ids.has(next)) next++;
      component.id = next;
      this.#ids.add(next);
    }
  }

  /** A sender's id (0 or absent means "assign one") must be unique in the message. */
  #claimId(id: number | null | undefined, path: FieldPath): number {
    if (!id) return 0;
    if (this.#ids.has(id)) this.#form.add([...path, 'id'], FormErrors.componentIdDuplicated());
    this.#ids.add(id);
    return id;
  }

  #claimCustomId(customId: string, path: FieldPath): void {
    if (this.#customIds.has(customId)) {
      this.#form.add([...path, 'custom_id'], FormErrors.componentCustomIdDuplicated());
    }
    this.#customIds.add(customId);
  }

  /** Up to 5 buttons, or one select alone: anything beside a select exceeds the row's width. */
  #actionRow(row: Static<typeof ActionRowRequest>, id: number, path: FieldPath): ActionRow {
    const children = [...path, 'components'];
    const { actionRowComponentsMin, actionRowButtons } = ComponentLimits;
    this.#form.checkLength(row.components, actionRowComponentsMin, actionRowButtons, children);
    const components = this.parseList<Button | SelectMenu>(row.components, children, PLACES.actionRow);
    const hasSelect = row.components.some((c) => SELECT_TYPES.includes((c as { type?: number })?.type ?? -1));
    if (hasSelect && row.components.length > 1) {
      for (let index = 1; index < row.components.length; index++) {
        this.#form.add([...children, index], FormErrors.componentLayoutWidthExceeded());
      }
    }
    return { type: ComponentTypes.ActionRow, id, components };
  }

  /** Style decides the fields (GUILDS.md §5): link needs `url`, premium `sku_id`, the others `custom_id`. */
  #button(button: Static<typeof ButtonRequest>, id: number, path: FieldPath): Button {
    const at = (field: string) => [...path, field];
    const notAllowed = (field: 'custom_id' | 'url' | 'sku_id' | 'label' | 'emoji') => {
      if (button[field] !== undefined && button[field] !== null) {
        this.#form.add(at(field), FormErrors.buttonFieldNotAllowed(button.style));
      }
    };
    if (button.style === ButtonStyles.Link) {
      if (!button.url) this.#form.add(at('url'), FormErrors.buttonUrlRequired());
      else if (!BUTTON_URL_SCHEMES.includes(schemeOf(button.url))) {
        this.#form.add(at('url'), FormErrors.urlScheme(schemeOf(button.url), BUTTON_URL_SCHEMES));
      }
      if (button.custom_id) this.#form.add(at('custom_id'), FormErrors.buttonCustomIdUrlMutuallyExclusive());
      notAllowed('sku_id');
    } else if (button.style === ButtonStyles.Premium) {
      if (!button.sku_id) this.#form.add(at('sku_id'), FormErrors.buttonSkuIdRequired());
      for (const field of ['custom_id', 'url', 'label', 'emoji'] as const) notAllowed(field);
    } else {
      if (!button.custom_id) this.#form.add(at('custom_id'), FormErrors.buttonCustomIdRequired());
      else this.#claimCustomId(button.custom_id, path);
      if (button.url && button.custom_id) {
        this.#form.add(at('url'), FormErrors.buttonCustomIdUrlMutuallyExclusive());
      } else {
        notAllowed('url');
      }
      notAllowed('sku_id');
    }
    const out: Button = { type: ComponentTypes.Button, id, style: button.style };
    if (button.label) out.label = button.label;
    if (button.emoji) out.emoji = emojiOf(button.emoji);
    if (button.custom_id) out.custom_id = button.custom_id;
    if (button.url) out.url = button.url;
    if (button.sku_id) out.sku_id = button.sku_id;
    if (button.disabled) out.disabled = true;
    return out;
  }

  #selectBase(
    select: Static<typeof AutoSelectRequest>,
    type: number,
    id: number,
    path: FieldPath,
  ): SelectMenu {
    this.#claimCustomId(select.custom_id, path);
    const min = select.min_values ?? 1;
    const max = select.max_values ?? 1;
    if (min > max) this.#form.add([...path, 'min_values'], FormErrors.maximum(max));
    const out: SelectMenu = { type, id, custom_id: select.custom_id, min_values: min, max_values: max };
    if (select.placeholder) out.placeholder = select.placeholder;
    if (select.disabled) out.disabled = true;
    return out;
  }

  #stringSelect(select: Static<typeof StringSelectRequest>, id: number, path: FieldPath): SelectMenu {
    const out = this.#selectBase(select, ComponentTypes.StringSelect, id, path);
    this.#form.checkLength(select.options, ComponentLimits.selectOptionsMin, ComponentLimits.selectOptions, [
      ...path,
      'options',
    ]);
    if (select.options.length > 0 && out.max_values > select.options.length) {
      this.#form.add([...path, 'max_values'], FormErrors.maximum(select.options.length));
    }
    const values = new Set<string>();
    select.options.forEach((option, index) => {
      if (values.has(option.value)) {
        this.#form.add([...path, 'options', index, 'value'], FormErrors.selectOptionValueDuplicated());
      }
      values.add(option.value);
    });
    if (select.options.filter((o) => o.default).length > out.max_values) {
      this.#form.add([...path, 'options'], FormErrors.selectTooManyDefaultValues());
    }
    out.options = select.options.map((option) => {
      const stored: NonNullable<SelectMenu['options']>[number] = { label: option.label, value: option.value };
      if (option.description) stored.description = option.description;
      if (option.emoji) stored.emoji = emojiOf(option.emoji);
      if (option.default) stored.default = true;
      return stored;
    });
    return out;
  }

  /** User, role, mentionable and channel selects: `default_values` of the kinds the menu offers (seed). */
  #autoSelect(
    select: Static<typeof ChannelSelectRequest>,
    type: number,
    id: number,
    path: FieldPath,
  ): SelectMenu {
    const out = this.#selectBase(select, type, id, path);
    const allowed = SELECT_DEFAULT_VALUE_TYPES[type] ?? [];
    if (select.default_values) {
      select.default_values.forEach((value, index) => {
        if (!allowed.includes(value.type)) {
          this.#form.add([...path, 'default_values', index, 'type'], FormErrors.choices(allowed));
        }
      });
      const count = select.default_values.length;
      if (count < out.min_values || count > out.max_values) {
        this.#form.add([...path, 'default_values'], FormErrors.badLength(out.min_values, out.max_values));
      }
      out.default_values = select.default_values.map((v) => ({ id: v.id, type: v.type }));
    }
    if (type === ComponentTypes.ChannelSelect && select.channel_types) {
      out.channel_types = [...select.channel_types];
    }
    return out;
  }

  /** One to three text displays beside one accessory, a button or a thumbnail. */
  #section(section: Static<typeof SectionRequest>, id: number, path: FieldPath): Section | undefined {
    const { sectionTextDisplaysMin, sectionTextDisplaysMax } = ComponentLimits;
    const texts = [...path, 'components'];
    this.#form.checkLength(section.components, sectionTextDisplaysMin, sectionTextDisplaysMax, texts);
    const components = this.parseList<TextDisplay>(section.components, texts, PLACES.sectionText);
    const accessory = this.parse(section.accessory, [...path, 'accessory'], PLACES.sectionAccessory);
    if (!accessory) return undefined;
    return { type: ComponentTypes.Section, id, components, accessory: accessory as Button | Thumbnail };
  }

  #thumbnail(thumbnail: Static<typeof ThumbnailRequest>, id: number, path: FieldPath): Thumbnail | undefined {
    const media = this.#media(thumbnail.media.url, [...path, 'media', 'url']);
    if (!media) return undefined;
    return {
      type: ComponentTypes.Thumbnail,
      id,
      media,
      description: thumbnail.description ?? null,
      spoiler: thumbnail.spoiler ?? false,
    };
  }

  #mediaGallery(gallery: Static<typeof MediaGalleryRequest>, id: number, path: FieldPath): MediaGallery {
    const items: MediaGallery['items'] = [];
    const { mediaGalleryItemsMin, mediaGalleryItemsMax } = ComponentLimits;
    this.#form.checkLength(gallery.items, mediaGalleryItemsMin, mediaGalleryItemsMax, [...path, 'items']);
    gallery.items.forEach((item, index) => {
      const media = this.#media(item.media.url, [...path, 'items', index, 'media', 'url']);
      if (media) items.push({ media, description: item.description ?? null, spoiler: item.spoiler ?? false });
    });
    return { type: ComponentTypes.MediaGallery, id, items };
  }

  /** A file component shows one upload of the message, named `attachment://<filename>`. */
  #file(file: Static<typeof FileRequest>, id: number, path: FieldPath): FileComponent | undefined {
    const urlPath = [...path, 'file', 'url'];
    if (!file.file.url.startsWith(ATTACHMENT_URL_PREFIX)) {
      this.#form.add(urlPath, FormErrors.mediaAttachmentRequired());
      return undefined;
    }
    const media = this.#media(file.file.url, urlPath);
    if (!media) return undefined;
    const attachment = this.#context.attachments.find((a) => a.id === media.attachment_id);
    return {
      type: ComponentTypes.File,
      id,
      file: media,
      name: attachment?.filename ?? null,
      size: attachment?.size ?? null,
      spoiler: file.spoiler ?? false,
    };
  }

  #separator(separator: Static<typeof SeparatorRequest>, id: number): Separator {
    return {
      type: ComponentTypes.Separator,
      id,
      spacing: separator.spacing ?? SeparatorSpacing.Small,
      divider: separator.divider ?? true,
    };
  }

  #container(container: Static<typeof ContainerRequest>, id: number, path: FieldPath): Container {
    const components = this.parseList<Container['components'][number]>(
      container.components,
      [...path, 'components'],
      PLACES.container,
    );
    return {
      type: ComponentTypes.Container,
      id,
      accent_color: container.accent_color ?? null,
      spoiler: container.spoiler ?? false,
      components,
    };
  }

  /** An external image (http/https) or an upload of the message (`attachment://<filename>`). */
  #media(url: string, path: FieldPath): UnfurledMedia | undefined {
    const scheme = schemeOf(url);
    if (!MEDIA_URL_SCHEMES.includes(scheme)) {
      this.#form.add(path, FormErrors.urlScheme(scheme, MEDIA_URL_SCHEMES));
      return undefined;
    }
    if (!url.startsWith(ATTACHMENT_URL_PREFIX)) {
      return {
        id: this.#context.newId(),
        url,
        proxy_url: url,
        width: null,
        height: null,
        content_type: null,
      };
    }
    const filename = url.slice(ATTACHMENT_URL_PREFIX.length);
    const attachment = this.#context.attachments.find((a) => a.filename === filename);
    if (!attachment) {
      this.#form.add(path, FormErrors.mediaAttachmentNotFound(filename));
      return undefined;
    }
    return {
      id: this.#context.newId(),
      url: attachment.url,
      proxy_url: attachment.proxy_url,
      width: attachment.width ?? null,
      height: attachment.height ?? null,
      content_type: attachment.content_type ?? null,
      attachment_id: attachment.id,
    };
  }
}

const SCHEMAS: Readonly<Record<number, TSchema>> = {
  [ComponentTypes.ActionRow]: ActionRowRequest,
  [ComponentTypes.Button]: ButtonRequest,
  [ComponentTypes.StringSelect]: StringSelectRequest,
  [ComponentTypes.UserSelect]: AutoSelectRequest,
  [ComponentTypes.RoleSelect]: AutoSelectRequest,
  [ComponentTypes.MentionableSelect]: AutoSelectRequest,
  [ComponentTypes.ChannelSelect]: ChannelSelectRequest,
  [ComponentTypes.Section]: SectionRequest,
  [ComponentTypes.TextDisplay]: TextDisplayRequest,
  [ComponentTypes.Thumbnail]: ThumbnailRequest,
  [ComponentTypes.MediaGallery]: MediaGalleryRequest,
  [ComponentTypes.File]: FileRequest,
  [ComponentTypes.Separator]: SeparatorRequest,
  [ComponentTypes.Container]: ContainerRequest,
};

function emojiOf(emoji: Static<typeof Emoji>): ComponentEmoji {
  const out: ComponentEmoji = { name: emoji.name ?? '' };
  if (emoji.id) out.id = emoji.id;
  if (emoji.animated) out.animated = true;
  return out;
}

/** Every component of a tree in document order: a parent, its children, then a section's accessory. */
function* walk(components: readonly Component[]): Generator<Component> {
  for (const component of components) {
    yield component;
    if ('components' in component) yield* walk(component.components);
    if ('accessory' in component) yield component.accessory;
  }
}
