import {
  ASPECT_RATIOS,
  CAPTION_MODES,
  CAPTION_POSITIONS,
  CAPTION_STYLES,
  DEFAULT_CLIP_CONFIG,
  LAYOUTS,
  MAX_PROMPT_CHARS,
  REFRAME_MODES,
  REMOVE_SILENCE_MODES,
  RESOLUTIONS,
  type ClipConfig,
} from "#contract";
import { BrandFields } from "./brand-fields.tsx";
import { Alert, CsrfField, Field, type FieldErrors } from "./form.tsx";

/** What the form shows: saved values, or what was typed when validation failed. */
export type ConfigFormValues = Record<keyof ClipConfig, string>;

/** Every member as the form's text: numbers as digits, null (a language left to detection) as "". */
export function valuesOf(config: ClipConfig): ConfigFormValues {
  return Object.fromEntries(Object.entries(config).map(([field, value]) => [field, value === null ? "" : String(value)])) as ConfigFormValues;
}

const ASPECT_LABELS: Record<(typeof ASPECT_RATIOS)[number], string> = {
  "9:16": "9:16 vertical (Shorts, Reels, TikTok)",
  "1:1": "1:1 square",
  "4:5": "4:5 portrait",
  "16:9": "16:9 landscape",
  original: "Original (as the source)",
};
const REFRAME_LABELS: Record<(typeof REFRAME_MODES)[number], string> = {
  auto: "Auto: faces where there are people, the whole frame for screens and slides, else the region of most activity",
  faces: "Faces: a camera that keeps the people in the picture whole",
  fit: "Fit: the whole frame, over a blurred copy of itself",
  center: "Center: keep the middle of the frame",
};
const LAYOUT_LABELS: Record<(typeof LAYOUTS)[number], string> = {
  single: "Single: one person (or a group that fits) in the frame; the one speaking",
  split: "Split: the two main faces stacked, one in each half",
  auto: "Auto: the one speaking, split while two people both speak",
};
const CAPTION_MODE_LABELS: Record<(typeof CAPTION_MODES)[number], string> = {
  both: "Both: burned into the picture and WebVTT/SRT files",
  burned: "Burned into the picture only",
  sidecar: "WebVTT/SRT files only",
  off: "Off",
};
const CAPTION_STYLE_LABELS: Record<(typeof CAPTION_STYLES)[number], string> = {
  bold: "Bold: large, outlined, the spoken word highlighted",
  clean: "Clean: one or two white lines with a shadow",
  boxed: "Boxed: text on a translucent box",
};
const CAPTION_POSITION_LABELS: Record<(typeof CAPTION_POSITIONS)[number], string> = {
  bottom: "Bottom",
  center: "Center",
};

export const REMOVE_SILENCE_LABELS: Record<(typeof REMOVE_SILENCE_MODES)[number], string> = {
  off: "Off: keep every pause",
  pauses: "Pauses: pauses over 0.8 s become 0.4 s",
  tight: "Tight: pauses over 0.35 s become 0.15 s",
};

function Select(props: { id: string; name: string; value: string; options: [string, string][]; describedBy?: string; invalid: boolean }) {
  const { id, name, value, options, describedBy, invalid } = props;
  return (
    <select id={id} name={name} aria-describedby={describedBy} aria-invalid={invalid ? "true" : undefined}>
      {options.map(([optionValue, label]) => (
        <option value={optionValue} selected={optionValue === value}>
          {label}
        </option>
      ))}
    </select>
  );
}

function NumberField(props: { name: keyof ClipConfig; label: string; min: number; max: number; values: ConfigFormValues; errors: FieldErrors }) {
  const id = `config-${props.name}`;
  const fallback = String(DEFAULT_CLIP_CONFIG[props.name]);
  return (
    <Field id={id} label={props.label} hint={`${props.min}-${props.max}. Default ${fallback}.`} error={props.errors[props.name]}>
      {(describedBy) => (
        <input
          id={id}
          name={props.name}
          type="number"
          inputmode="numeric"
          min={props.min}
          max={props.max}
          step={1}
          value={props.values[props.name]}
          aria-invalid={props.errors[props.name] ? "true" : undefined}
          aria-describedby={describedBy}
        />
      )}
    </Field>
  );
}

export interface ConfigFormProps {
  /** Null: a new configuration (the name is asked for). */
  name: string | null;
  values: ConfigFormValues;
  errors: FieldErrors;
  general: string[];
  csrf: string;
  typedName?: string;
  /** The account has uploaded a logo (the logo field says where to upload one otherwise). */
  hasLogo?: boolean;
}

/** Every field of SPEC section 3, with the contract's defaults and ranges. */
export function ConfigForm({ name, values, errors, general, csrf, typedName = "", hasLogo = false }: ConfigFormProps) {
  const d = DEFAULT_CLIP_CONFIG;
  return (
    <form method="post" action={name === null ? "/dashboard/configs" : `/dashboard/configs/${name}`} novalidate>
      <CsrfField token={csrf} />
      <Alert messages={general} />
      {name === null ? (
        <Field
          id="config-name"
          label="Name"
          hint="Lower-case letters, digits, - and _ (up to 64). The API's config_name."
          error={errors.name}
        >
          {(describedBy) => (
            <input id="config-name" name="name" required maxlength={64} pattern="[a-z0-9][a-z0-9_\-]{0,63}" value={typedName} aria-invalid={errors.name ? "true" : undefined} aria-describedby={describedBy} />
          )}
        </Field>
      ) : null}
      <div class="grid">
        <Field id="config-aspect_ratio" label="Aspect ratio" hint={`Default ${d.aspect_ratio}.`} error={errors.aspect_ratio}>
          {(describedBy) => (
            <Select id="config-aspect_ratio" name="aspect_ratio" invalid={Boolean(errors.aspect_ratio)} value={values.aspect_ratio} options={ASPECT_RATIOS.map((r) => [r, ASPECT_LABELS[r]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-resolution" label="Resolution" hint={`The output's short side. Default ${d.resolution}.`} error={errors.resolution}>
          {(describedBy) => (
            <Select id="config-resolution" name="resolution" invalid={Boolean(errors.resolution)} value={values.resolution} options={RESOLUTIONS.map((r) => [String(r), `${r}p`])} describedBy={describedBy} />
          )}
        </Field>
        <NumberField name="min_clip_seconds" label="Shortest clip (seconds)" min={5} max={120} values={values} errors={errors} />
        <NumberField name="max_clip_seconds" label="Longest clip (seconds)" min={10} max={180} values={values} errors={errors} />
        <NumberField name="max_clips" label="Clips at most" min={1} max={20} values={values} errors={errors} />
        <Field id="config-reframe" label="Reframing" hint={`Default ${d.reframe}.`} error={errors.reframe}>
          {(describedBy) => (
            <Select id="config-reframe" name="reframe" invalid={Boolean(errors.reframe)} value={values.reframe} options={REFRAME_MODES.map((m) => [m, REFRAME_LABELS[m]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-layout" label="Layout" hint={`With faces or auto reframing. Default ${d.layout}.`} error={errors.layout}>
          {(describedBy) => (
            <Select id="config-layout" name="layout" invalid={Boolean(errors.layout)} value={values.layout} options={LAYOUTS.map((l) => [l, LAYOUT_LABELS[l]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-zoom" label="Punch-in" hint="Pushes in briefly on moments of vocal emphasis, never cutting a framed face." error={errors.zoom}>
          {(describedBy) => (
            <Select id="config-zoom" name="zoom" invalid={Boolean(errors.zoom)} value={values.zoom} options={[["off", "Off"], ["emphasis", "On emphasis"]]} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-captions" label="Captions" hint={`From the job's transcript, when it has one. Default ${d.captions}.`} error={errors.captions}>
          {(describedBy) => (
            <Select id="config-captions" name="captions" invalid={Boolean(errors.captions)} value={values.captions} options={CAPTION_MODES.map((m) => [m, CAPTION_MODE_LABELS[m]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-caption_style" label="Caption style" hint={`Burned captions only. Default ${d.caption_style}.`} error={errors.caption_style}>
          {(describedBy) => (
            <Select id="config-caption_style" name="caption_style" invalid={Boolean(errors.caption_style)} value={values.caption_style} options={CAPTION_STYLES.map((m) => [m, CAPTION_STYLE_LABELS[m]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-caption_position" label="Caption position" hint={`Burned captions only. Default ${d.caption_position}.`} error={errors.caption_position}>
          {(describedBy) => (
            <Select id="config-caption_position" name="caption_position" invalid={Boolean(errors.caption_position)} value={values.caption_position} options={CAPTION_POSITIONS.map((m) => [m, CAPTION_POSITION_LABELS[m]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-remove_silence" label="Remove silence" hint={`Shortens pauses inside each clip. Default ${d.remove_silence}.`} error={errors.remove_silence}>
          {(describedBy) => (
            <Select id="config-remove_silence" name="remove_silence" invalid={Boolean(errors.remove_silence)} value={values.remove_silence} options={REMOVE_SILENCE_MODES.map((m) => [m, REMOVE_SILENCE_LABELS[m]])} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-caption_emphasis" label="Key words" hint="Clips judged by a model: their up to three key words in the highlight colour (burned) and bold (WebVTT)." error={errors.caption_emphasis}>
          {(describedBy) => (
            <Select id="config-caption_emphasis" name="caption_emphasis" invalid={Boolean(errors.caption_emphasis)} value={values.caption_emphasis} options={[["keywords", "Emphasise them"], ["off", "Off"]]} describedBy={describedBy} />
          )}
        </Field>
        <Field id="config-remove_fillers" label="Filler words" hint="Cuts um, uh, erm and the like (needs a transcript)." error={errors.remove_fillers}>
          {(describedBy) => (
            <Select id="config-remove_fillers" name="remove_fillers" invalid={Boolean(errors.remove_fillers)} value={values.remove_fillers} options={[["false", "Keep them"], ["true", "Cut them"]]} describedBy={describedBy} />
          )}
        </Field>
      </div>
      <Field id="config-prompt" label="Prompt (optional)" hint={`Clip only moments about this topic, e.g. "the parts about pricing". Up to ${MAX_PROMPT_CHARS} characters; needs speech or captions.`} error={errors.prompt}>
        {(describedBy) => (
          <textarea id="config-prompt" name="prompt" rows={2} maxlength={MAX_PROMPT_CHARS} aria-invalid={errors.prompt ? "true" : undefined} aria-describedby={describedBy}>
            {values.prompt}
          </textarea>
        )}
      </Field>
      <BrandFields values={values} errors={errors} hasLogo={hasLogo} />
      <div class="actions">
        <button type="submit">{name === null ? "Create configuration" : "Save changes"}</button>
        {name !== null ? (
          <a class="button secondary" href="/dashboard/configs">
            Cancel
          </a>
        ) : null}
      </div>
    </form>
  );
}
