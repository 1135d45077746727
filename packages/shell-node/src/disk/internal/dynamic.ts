/**
 * Reading a runtime's own API (Bun's `bun:ffi`, Deno's `Deno` namespace),
 * which has no types here and must not be trusted to have the shape we
 * expect: every member is looked up and checked before it is called.
 */

/** A member of `target` that is a function, or `null`. */
const methodOf = (
  target: unknown,
  name: string,
): ((...args: ReadonlyArray<unknown>) => unknown) | null => {
  if ((typeof target !== "object" && typeof target !== "function") || target === null) return null;
  const member: unknown = Reflect.get(target, name);
  return typeof member === "function"
    ? (...args: ReadonlyArray<unknown>) => Reflect.apply(member, target, args)
    : null;
};

/** A runtime's API lacks a member the shell needs (a runtime version it does not know). */
export class MissingMember extends Error {
  constructor(readonly member: string) {
    super(`${member} is not available in this runtime`);
  }
}

/** Calls `target[name](...args)`; throws `MissingMember` when it is not a function. */
export const invoke = (target: unknown, name: string, ...args: ReadonlyArray<unknown>): unknown => {
  const method = methodOf(target, name);
  if (method === null) throw new MissingMember(name);
  return method(...args);
};

/** `target[name]`, or `undefined` when `target` is not an object. */
export const member = (target: unknown, name: string): unknown =>
  (typeof target === "object" || typeof target === "function") && target !== null
    ? Reflect.get(target, name)
    : undefined;
