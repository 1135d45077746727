/**
 * The worker's wait for room after the engine's backpressure refused a
 * command: it ends at the engine's next commit, or after `roomWaitMaxMs`
 * when none comes (a queue of commands frees up without a commit of this
 * worker's), and either way it takes its listener off the commit watch and
 * leaves no timer behind (a worker under long backpressure waits thousands
 * of times). Fake timers stand for the real one `roomWait` sets.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { roomWait, roomWaitMaxMs } from "../../src/worker/internal/backpressure.js";

/** A commit watch whose listeners the test calls; counts those still watching. */
const fakeWatch = () => {
  const listeners = new Set<() => void>();
  const watch = (listener: () => void) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };
  const commit = () => {
    for (const listener of [...listeners]) listener();
  };
  return { watch, commit, listeners };
};

describe("roomWait", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("ends at the next commit, unwatched, its timer cleared", async () => {
    const { watch, commit, listeners } = fakeWatch();
    let ended = false;
    void roomWait(watch)().then(() => {
      ended = true;
    });
    expect(listeners.size).toBe(1);
    commit();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toBe(true);
    expect(listeners.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends after roomWaitMaxMs without a commit, unwatched", async () => {
    const { watch, listeners } = fakeWatch();
    let ended = false;
    void roomWait(watch)().then(() => {
      ended = true;
    });
    await vi.advanceTimersByTimeAsync(roomWaitMaxMs - 1);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toBe(true);
    expect(listeners.size).toBe(0);
  });
});
