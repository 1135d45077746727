// The request histogram counted in plain arrays writes what prom-client's labelled histogram
// writes for the same observations: both are fed one sequence (every bucket's edge, between
// edges, over the last, several routes and statuses, a label needing escapes) and compared line by line.
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RequestSeconds } from "../../src/server/internal/requestSeconds.js";

const bounds = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2];

describe("RequestSeconds", () => {
  it("writes the lines prom-client writes for the same observations", async () => {
    const registry = new Registry();
    const reference = new Histogram({
      name: "tay_request_seconds",
      help: "Requests from arrival to answer\nwith a \\ and a newline",
      labelNames: ["route", "status"] as const,
      buckets: bounds,
      registers: [registry],
    });
    const counted = new RequestSeconds(
      "tay_request_seconds",
      "Requests from arrival to answer\nwith a \\ and a newline",
      bounds,
    );
    const seconds = [0, ...bounds, ...bounds.map((bound) => bound * 1.5), 3, 0.00003];
    const series: ReadonlyArray<readonly [string, number]> = [
      ["/v1/insert", 200],
      ["/v1/insert", 409],
      ["/v1/jobs/:jobId", 200],
      ['odd"route\\', 404],
    ];
    for (const [route, status] of series) {
      for (const value of seconds) {
        reference.labels({ route, status: String(status) }).observe(value);
        counted.observe(route, status, value);
      }
    }
    const lines = (text: string) => text.trim().split("\n").sort();
    expect(lines(counted.text())).toEqual(lines(await registry.metrics()));
  });

  it("writes its help and type without series before any request", async () => {
    const counted = new RequestSeconds("tay_request_seconds", "Requests", bounds);
    expect(counted.text()).toBe(
      "# HELP tay_request_seconds Requests\n# TYPE tay_request_seconds histogram",
    );
  });
});
