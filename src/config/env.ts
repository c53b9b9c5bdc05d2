/** `${VAR}` and `${VAR:-default}` substitution from the environment, so no secret needs to live in a file. */

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\$/g;

/** Result of interpolating one string: the text, and the names of variables that were unset with no default. */
export interface Interpolated {
  value: string;
  missing: string[];
}

/** Replaces `${VAR}` / `${VAR:-default}` (and `$$` → `$`) in `text` from `env`. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): Interpolated {
  const missing: string[] = [];
  const value = text.replace(REF, (whole, name: string | undefined, def: string | undefined) => {
    if (whole === '$$') return '$';
    const v = env[name!];
    if (v !== undefined && v !== '') return v;
    if (def !== undefined) return def;
    missing.push(name!);
    return '';
  });
  return { value, missing };
}
