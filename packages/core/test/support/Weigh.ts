// Weighs what a structure holds on V8's heap, for the tests that bound the
// bytes a job, an index entry or a decision costs (docs/core.md, "What an
// active job holds, byte by byte").
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

const weighOnce = <T>(count: number, build: () => T, check: (built: T) => void): number => {
  collect();
  collect();
  const before = getHeapStatistics().used_heap_size;
  const built = build();
  collect();
  collect();
  const after = getHeapStatistics().used_heap_size;
  // Read after the second weighing, so what `build` made is still held then.
  check(built);
  return (after - before) / count;
};

/**
 * Bytes on V8's heap that what `build` returns holds, per one of its
 * `count` parts; `check` looks at it after it is weighed (which keeps it
 * alive until then). The least of three weighings: anything else the
 * process allocates meanwhile (the test runner's own messages) only ever
 * adds bytes, and a planted regression adds them to all three.
 */
export const heapBytesPer = <T>(count: number, build: () => T, check: (built: T) => void): number =>
  Math.min(
    weighOnce(count, build, check),
    weighOnce(count, build, check),
    weighOnce(count, build, check),
  );
