/**
 * Passwords are never stored: any key that looks like it holds one is
 * removed, at any depth, before validation and before anything is written.
 */
const PASSWORD_LIKE = /pass(word|wd|phrase)?|^pwd$|secret|credential|^auth(orization)?$|api[_-]?key|token/i;

export function isPasswordLike(key: string): boolean {
  return PASSWORD_LIKE.test(key);
}

/** Returns a copy of `value` without password-like keys, and the paths removed. */
export function scrubPasswords(value: unknown, path = ''): { value: unknown; removed: string[] } {
  const removed: string[] = [];
  const walk = (input: unknown, at: string): unknown => {
    if (Array.isArray(input)) return input.map((item, i) => walk(item, `${at}/${i}`));
    if (input === null || typeof input !== 'object') return input;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(input)) {
      if (isPasswordLike(key)) {
        removed.push(`${at}/${key}`);
        continue;
      }
      out[key] = walk(inner, `${at}/${key}`);
    }
    return out;
  };
  return { value: walk(value, path), removed };
}
