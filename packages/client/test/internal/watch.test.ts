// The watch's reopening rules (internal/watch.ts), on scripted streams: each open is answered by
// the next script (events, then an end or an error), and what `from` each open asked for is kept.
// The restart against a real server is in Streams.test.ts; here are the cases a server cannot be
// made to produce on cue: a compaction while the watch was away, a refusal after a drop.
import { describe, expect, it } from "vitest";
import { watching } from "../../src/internal/watch.js";
import type * as Wire from "../../src/Wire.js";

type Committed = Wire.CommittedEvent;

const committed = (sequence: number, member = 0): Committed => ({
  sequence,
  member,
  event: { _tag: "JobCancelled", jobId: sequence, at: 0, reason: null },
});

interface Script {
  readonly events: ReadonlyArray<Committed>;
  readonly error?: unknown;
}

/** A subscribe that answers open N with `scripts[N]` (then waits forever), keeping each `from`. */
const scripted = (scripts: ReadonlyArray<Script>) => {
  const froms: Array<number | undefined> = [];
  const subscribe = (from: number | undefined) => {
    const script = scripts[froms.length];
    froms.push(from);
    let closed = false;
    async function* stream(): AsyncGenerator<Committed> {
      if (script === undefined) {
        while (!closed) await new Promise((resolve) => setTimeout(resolve, 5));
        return;
      }
      for (const event of script.events) yield event;
      if (script.error !== undefined) throw script.error;
    }
    return Object.assign(stream(), {
      close: () => {
        closed = true;
      },
    });
  };
  return { froms, subscribe };
};

const settle = () => new Promise((resolve) => setTimeout(resolve, 60));
const dropped = { _tag: "ConnectionFailed", code: "ECONNRESET" };

describe("watching", () => {
  it("reopens at the last record told and skips the members of it already told", async () => {
    const { froms, subscribe } = scripted([
      { events: [committed(1), committed(2, 0)], error: dropped },
      { events: [committed(2, 0), committed(2, 1), committed(3)] },
    ]);
    const told: Array<string> = [];
    const stop = watching(
      subscribe,
      (events) => {
        for (const { sequence, member } of events) told.push(`${sequence}.${member}`);
      },
      1,
    );
    await settle();
    stop();
    expect(froms).toEqual([undefined, 2, 3]);
    expect(told).toEqual(["1.0", "2.0", "2.1", "3.0"]);
  });

  it("goes on from the next commit when what it missed was compacted away", async () => {
    const { froms, subscribe } = scripted([
      { events: [committed(1)], error: dropped },
      { events: [], error: { _tag: "Compacted", status: 410 } },
      { events: [committed(9)] },
    ]);
    const told: Array<number> = [];
    const stop = watching(subscribe, (events) => told.push(...events.map((e) => e.sequence)), 1);
    await settle();
    stop();
    expect(froms.slice(0, 3)).toEqual([undefined, 1, undefined]);
    expect(told).toEqual([1, 9]);
  });

  it("ends for good on a refusal (a wrong token) or a closed client, asking no more", async () => {
    for (const refusal of [
      { _tag: "Unauthorized", status: 401 },
      { _tag: "ConnectionFailed", code: "ECLOSED" },
    ]) {
      const { froms, subscribe } = scripted([{ events: [], error: refusal }]);
      const stop = watching(subscribe, () => {}, 1);
      await settle();
      stop();
      expect(froms).toEqual([undefined]);
    }
  });

  it("asks again after a failure that may pass (a 503, a reset) and after a clean end", async () => {
    const { froms, subscribe } = scripted([
      { events: [], error: { _tag: "StoreClosed", status: 503 } },
      { events: [] },
      { events: [], error: dropped },
    ]);
    const stop = watching(subscribe, () => {}, 1);
    await settle();
    stop();
    expect(froms).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("stops during the pause without opening again", async () => {
    const { froms, subscribe } = scripted([{ events: [], error: dropped }]);
    const stop = watching(subscribe, () => {}, 50);
    await new Promise((resolve) => setTimeout(resolve, 10));
    stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(froms).toEqual([undefined]);
  });

  it("given a relocation, opens where it answers after a compaction and says so before telling more", async () => {
    const { froms, subscribe } = scripted([
      { events: [committed(1)], error: dropped },
      { events: [], error: { _tag: "Compacted", status: 410 } },
      { events: [committed(9)] },
    ]);
    const order: Array<string> = [];
    let asked = 0;
    const relocation = {
      relocate: async () => {
        asked += 1;
        // The first answer fails as a dropped connection would: asked again after the pause.
        if (asked === 1) throw dropped;
        return 9;
      },
      relocated: () => order.push("relocated"),
    };
    const stop = watching(
      subscribe,
      (events) => order.push(...events.map((e) => `told ${e.sequence}`)),
      1,
      1,
      relocation,
    );
    await settle();
    stop();
    expect(froms.slice(0, 3)).toEqual([1, 1, 9]);
    expect(asked).toBe(2);
    expect(order).toEqual(["told 1", "relocated", "told 9"]);
  });

  it("ends for good when the relocation is refused for good (a closed client)", async () => {
    const { froms, subscribe } = scripted([
      { events: [], error: { _tag: "Compacted", status: 410 } },
    ]);
    let relocated = 0;
    const stop = watching(subscribe, () => {}, 1, 5, {
      relocate: async () => {
        throw { _tag: "ConnectionFailed", code: "ECLOSED" };
      },
      relocated: () => {
        relocated += 1;
      },
    });
    await settle();
    stop();
    expect(froms).toEqual([5]);
    expect(relocated).toBe(0);
  });
});
