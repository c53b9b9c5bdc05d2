/**
 * A member of a service's object is data, whatever its name. Plain assignment of the key `__proto__` changes the
 * object's prototype instead: the member is lost, and its members would show through as inherited fields of the
 * reading. JSON.parse makes `__proto__` an own member; so does this.
 */

/** Sets `obj[key] = value` as an own, enumerable member, the key `__proto__` included. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}
