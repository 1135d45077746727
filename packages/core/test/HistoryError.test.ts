// History errors are plain, serialisable data, and `describe` names the
// reason, the position and the record for logs.
import { Event, HistoryError } from "@tay/core";
import { describe, expect, it } from "vitest";

describe("HistoryError", () => {
  const error = HistoryError.historyError({
    index: 3,
    sequence: 17,
    event: Event.mutation([]),
    memberIndex: null,
    reason: { _tag: "EmptyMutation" },
  });

  it("round-trips through JSON", () => {
    expect(JSON.parse(JSON.stringify(error))).toEqual(error);
  });

  it("describes the sequence when known, else the index", () => {
    expect(HistoryError.describe(error)).toBe("EmptyMutation at sequence 17 in Mutation: {}");
    expect(HistoryError.describe({ ...error, sequence: undefined, memberIndex: 2 })).toBe(
      "EmptyMutation at index 3 (mutation member 2) in Mutation: {}",
    );
  });

  it("lists every reason tag once", () => {
    expect(new Set(HistoryError.reasonTags).size).toBe(HistoryError.reasonTags.length);
  });
});
