// A ticket tells every waiter once, in the order they came, the first alone without an array
// (the engine's drain is most tickets' only waiter); one that throws does not stop the others.
import { describe, expect, it } from "vitest";
import * as Ticket from "../../src/log/Ticket.js";

describe("tickets", () => {
  it("tell one waiter, or many in the order they came, once", () => {
    const told: Array<string> = [];
    const one = Ticket.make<string>(1);
    Ticket.onSettled(one, (failure) => told.push(`one ${failure}`));
    const many = Ticket.make<string>(2);
    for (const name of ["a", "b", "c"])
      Ticket.onSettled(many, (failure) => told.push(`${name} ${failure}`));
    Ticket.settle(one, undefined);
    Ticket.settle(many, "EIO");
    Ticket.settle(many, undefined);
    expect(told).toEqual(["one undefined", "a EIO", "b EIO", "c EIO"]);
    // A waiter that comes after the end is told at once.
    Ticket.onSettled(many, (failure) => told.push(`late ${failure}`));
    expect(told.at(-1)).toBe("late EIO");
  });

  it("tell every waiter even when one throws, then throw its error", () => {
    const told: Array<string> = [];
    const ticket = Ticket.make<string>(1);
    Ticket.onSettled(ticket, () => {
      throw new Error("a bug");
    });
    Ticket.onSettled(ticket, () => told.push("second"));
    Ticket.onSettled(ticket, () => told.push("third"));
    expect(() => Ticket.settle(ticket, undefined)).toThrow("a bug");
    expect(told).toEqual(["second", "third"]);
  });
});
