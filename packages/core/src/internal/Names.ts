/**
 * One string per queue and worker name among the jobs a runtime decides
 * (2026-12-04, issue 19; docs/core.md, "Names held once"). A name that
 * reaches a decider from a parsed request (`JSON.parse`, a wire decoder) is
 * a string of its own for every job: 32 to 56 bytes a name, twice a job,
 * for as long as the job stays in the state. The deciders put the first
 * string seen of each name into their events instead, so every record of a
 * queue points at one. Decoded records need none of this: the codec's
 * string cache already gives one string per name.
 */

/**
 * Names remembered at most. Past it the memory starts again empty: a flood
 * of distinct names costs a few hundred kilobytes, never more, and the
 * names in use are remembered again as they come.
 */
export const internedNamesMax = 4096;

// Module state, but of no consequence to any result: `interned` returns a
// string equal to its argument either way.
let names = new Map<string, string>();

/** `name` itself, as the first string equal to it that was given here. */
export const interned = (name: string): string => {
  const known = names.get(name);
  if (known !== undefined) return known;
  if (names.size >= internedNamesMax) names = new Map();
  names.set(name, name);
  return name;
};
