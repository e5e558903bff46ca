/**
 * The brand and language part of the configuration form: caption
 * font, size and colours, logo placement, hook title, spoken-language hint
 * and caption language. Colours use the browser's colour picker, which
 * submits #rrggbb, the contract's own format.
 */
import {
  CAPTION_FONTS,
  CAPTION_LANGUAGES,
  DEFAULT_CLIP_CONFIG,
  LANGUAGE_NAMES,
  LOGO_POSITIONS,
  MAX_HOOK_TITLE_SECONDS,
  SPEECH_LANGUAGES,
  type ClipConfig,
  type LanguageCode,
} from "#contract";
import { Field, type FieldErrors } from "./form.tsx";

type Values = Record<keyof ClipConfig, string>;

const LOGO_POSITION_LABELS: Record<(typeof LOGO_POSITIONS)[number], string> = {
  off: "No logo",
  "top-left": "Top left",
  "top-right": "Top right",
  "bottom-left": "Bottom left",
  "bottom-right": "Bottom right",
};

const COLOR_FIELDS = [
  ["caption_color", "Caption text colour", "The words' colour."],
  ["caption_highlight_color", "Highlight colour", "The word being said (bold style)."],
  ["caption_outline_color", "Outline colour", "Around the letters (bold and clean styles)."],
  ["caption_box_color", "Box colour", "Behind the text (boxed style), translucent."],
] as const;

function languageOptions(codes: readonly LanguageCode[], none: string): [string, string][] {
  const named = codes.map((code): [string, string] => [code, `${LANGUAGE_NAMES[code]} (${code})`]).sort((a, b) => a[1].localeCompare(b[1]));
  return [["", none], ...named];
}

function Options(props: { value: string; options: [string, string][] }) {
  return (
    <>
      {props.options.map(([value, label]) => (
        <option value={value} selected={value === props.value}>
          {label}
        </option>
      ))}
    </>
  );
}

function invalid(errors: FieldErrors, name: string): "true" | undefined {
  return errors[name] ? "true" : undefined;
}

export function BrandFields({ values, errors, hasLogo }: { values: Values; errors: FieldErrors; hasLogo: boolean }) {
  const d = DEFAULT_CLIP_CONFIG;
  return (
    <>
      <fieldset>
        <legend>Brand</legend>
        <div class="grid">
          <Field id="config-caption_font" label="Caption font" hint={`Installed fonts; other scripts fall back to a matching Noto font. Default ${d.caption_font}.`} error={errors.caption_font}>
            {(describedBy) => (
              <select id="config-caption_font" name="caption_font" aria-describedby={describedBy} aria-invalid={invalid(errors, "caption_font")}>
                <Options value={values.caption_font} options={CAPTION_FONTS.map((f) => [f, f])} />
              </select>
            )}
          </Field>
          <Field id="config-caption_size" label="Caption size (%)" hint={`Of the style's own size, 50-200. Default ${d.caption_size}.`} error={errors.caption_size}>
            {(describedBy) => (
              <input id="config-caption_size" name="caption_size" type="number" inputmode="numeric" min={50} max={200} step={5} value={values.caption_size} aria-describedby={describedBy} aria-invalid={invalid(errors, "caption_size")} />
            )}
          </Field>
          {COLOR_FIELDS.map(([name, label, hint]) => (
            <Field id={`config-${name}`} label={label} hint={`${hint} Default ${d[name]}.`} error={errors[name]}>
              {(describedBy) => (
                <input id={`config-${name}`} name={name} type="color" value={values[name]} aria-describedby={describedBy} aria-invalid={invalid(errors, name)} />
              )}
            </Field>
          ))}
          <Field
            id="config-logo_position"
            label="Logo"
            hint={hasLogo ? "Your account's logo (Logo page)." : "Upload your logo on the Logo page first; jobs with a logo placed need one."}
            error={errors.logo_position}
          >
            {(describedBy) => (
              <select id="config-logo_position" name="logo_position" aria-describedby={describedBy} aria-invalid={invalid(errors, "logo_position")}>
                <Options value={values.logo_position} options={LOGO_POSITIONS.map((p) => [p, LOGO_POSITION_LABELS[p]])} />
              </select>
            )}
          </Field>
          <Field id="config-logo_size" label="Logo width (%)" hint={`Of the clip's width, 5-50. Default ${d.logo_size}.`} error={errors.logo_size}>
            {(describedBy) => (
              <input id="config-logo_size" name="logo_size" type="number" inputmode="numeric" min={5} max={50} step={1} value={values.logo_size} aria-describedby={describedBy} aria-invalid={invalid(errors, "logo_size")} />
            )}
          </Field>
          <Field id="config-logo_opacity" label="Logo opacity" hint={`0.1 (faint) to 1 (solid). Default ${d.logo_opacity}.`} error={errors.logo_opacity}>
            {(describedBy) => (
              <input id="config-logo_opacity" name="logo_opacity" type="number" inputmode="decimal" min={0.1} max={1} step={0.05} value={values.logo_opacity} aria-describedby={describedBy} aria-invalid={invalid(errors, "logo_opacity")} />
            )}
          </Field>
          <Field
            id="config-hook_title_seconds"
            label="Hook title (seconds)"
            hint={`The clip's title at the top for its first seconds, in the caption font and colours; 0 for none (up to ${MAX_HOOK_TITLE_SECONDS}).`}
            error={errors.hook_title_seconds}
          >
            {(describedBy) => (
              <input id="config-hook_title_seconds" name="hook_title_seconds" type="number" inputmode="numeric" min={0} max={MAX_HOOK_TITLE_SECONDS} step={1} value={values.hook_title_seconds} aria-describedby={describedBy} aria-invalid={invalid(errors, "hook_title_seconds")} />
            )}
          </Field>
        </div>
      </fieldset>
      <fieldset>
        <legend>Language</legend>
        <div class="grid">
          <Field id="config-language" label="Spoken language" hint="A hint for speech-to-text; leave on detect unless detection gets it wrong." error={errors.language}>
            {(describedBy) => (
              <select id="config-language" name="language" aria-describedby={describedBy} aria-invalid={invalid(errors, "language")}>
                <Options value={values.language} options={languageOptions(SPEECH_LANGUAGES, "Detect")} />
              </select>
            )}
          </Field>
          <Field id="config-caption_language" label="Caption language" hint="Captions, sidecars and clip text translated into this language (Workers AI); cuts still follow the speech." error={errors.caption_language}>
            {(describedBy) => (
              <select id="config-caption_language" name="caption_language" aria-describedby={describedBy} aria-invalid={invalid(errors, "caption_language")}>
                <Options value={values.caption_language} options={languageOptions(CAPTION_LANGUAGES, "As spoken")} />
              </select>
            )}
          </Field>
        </div>
      </fieldset>
    </>
  );
}
