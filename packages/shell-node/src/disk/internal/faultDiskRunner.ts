/**
 * How the fault disk runs one operation, atomically: it counts the cut point
 * (cutting the power when armed to), refuses with the power-cut error or an
 * injected failure, else runs the model's step, then logs the outcome.
 */
import * as Disk from "../Disk.js";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import {
  ArmedFaults,
  failureOf,
  type Injected,
  injectedBy,
  injectedNothing,
} from "./faultDiskFaults.js";
import { type Attempt, diskOperationOf, OperationLog } from "./faultDiskLog.js";
import { type Refusal, refuse } from "./faultDiskPaths.js";

/** The error every operation fails with once the power is cut. */
export const powerCutDetail = "power cut";

/** One step of the model: given what the faults ask, the result or the refusal. */
export type Step<A> = (injected: Injected) => Either.Either<A, Refusal>;

/** Runs one operation of the disk: see the module's description. */
export type Run = <A>(
  current: Attempt,
  step: Step<A>,
  bytesOf?: (value: A) => number,
) => Effect.Effect<A, Disk.DiskError>;

/** The power, the cut points passed, the armed faults and the log of one fault disk. */
export class OperationRunner {
  readonly faults = new ArmedFaults();
  readonly log: OperationLog;
  private powerOff = false;
  private mutationCount = 0;
  private cutAt: number | undefined;

  constructor(logEntriesMax: number, cutAt: number | undefined) {
    this.log = new OperationLog(logEntriesMax);
    this.cutAt = cutAt;
  }

  /** Cuts the power now. */
  cutPower(): void {
    this.powerOff = true;
  }

  /** Cuts the power just before mutating operation `cutPoint`. */
  cutPowerAt(cutPoint: number): void {
    this.cutAt = cutPoint;
  }

  poweredOff(): boolean {
    return this.powerOff;
  }

  /** Mutating operations attempted so far. */
  mutations(): number {
    return this.mutationCount;
  }

  /** Runs one operation: see the module's description. */
  readonly run: Run = (current, step, bytesOf) =>
    Effect.suspend(() => {
      const cutPoint = this.nextCutPoint(current);
      const outcome = this.decide(current, step);
      this.log.record(current, {
        cutPoint,
        outcome: Either.isRight(outcome) ? "ok" : outcome.left.code,
        powerCut: Either.isLeft(outcome) && this.powerOff,
        bytes:
          Either.isRight(outcome) && bytesOf !== undefined ? bytesOf(outcome.right) : undefined,
      });
      return Either.match(outcome, {
        onRight: (value) => Effect.succeed(value),
        onLeft: (refusal) => Effect.fail(diskErrorOf(current, refusal)),
      });
    });

  private nextCutPoint(current: Attempt): number | undefined {
    if (!current.mutating) return undefined;
    const cutPoint = this.mutationCount;
    this.mutationCount += 1;
    if (this.cutAt !== undefined && cutPoint >= this.cutAt) this.powerOff = true;
    return cutPoint;
  }

  private decide<A>(current: Attempt, step: Step<A>): Either.Either<A, Refusal> {
    if (this.powerOff && !current.survivesPowerCut) return refuse("EIO", powerCutDetail);
    const struck = this.faults.strike(current);
    const failure = failureOf(struck);
    if (failure !== undefined) {
      // close(2) frees the descriptor, and with it the flock, even when it reports an error:
      // a failed close or release still closes (a disk that kept the lock would refuse every
      // reopen of the process with LockHeld, which no real kernel does).
      if (current.survivesPowerCut) step(injectedNothing);
      return refuse(failure.code, `injected fault: ${failure.code}`);
    }
    return step(injectedBy(struck));
  }
}

const diskErrorOf = (current: Attempt, refusal: Refusal): Disk.DiskError =>
  new Disk.DiskError({
    operation: diskOperationOf(current.kind),
    path: current.path,
    code: refusal.code,
    detail: refusal.detail,
  });
