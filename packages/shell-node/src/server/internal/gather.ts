/**
 * Requests that arrive together decide together. Node reads each
 * connection in its own I/O callback, and the engine's drain is a
 * microtask, so without help every request of a busy poll phase would be
 * its own drain (its own decide, append and ticket; measured at about
 * three times the engine CPU of one drain of many). A command waits here
 * for the next check phase (`setImmediate`), which runs once every
 * connection readable in this poll phase has been read; every command
 * waiting then resumes in the same microtask checkpoint and so joins one
 * drain, as concurrent in-process callers do.
 */

let waiting: Promise<void> | undefined;

const release = (resolve: () => void) => () => {
  waiting = undefined;
  resolve();
};

/**
 * Resolves at the next check phase, together with every other caller of
 * this poll phase. One promise and one immediate per loop iteration, not
 * per request.
 */
export const gathered = (): Promise<void> => {
  waiting ??= new Promise((resolve) => {
    setImmediate(release(resolve));
  });
  return waiting;
};
