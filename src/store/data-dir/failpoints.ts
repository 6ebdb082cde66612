/**
 * Named points on the persistence path where a test can stop the process dead
 * (`PETSTORE_FAILPOINT=<step>[:<n>]`, the n-th time the step is reached) to prove that a restart
 * loses nothing acknowledged, whatever the moment of the crash; or, with `:<ERRNO>` after it, make
 * the operation there fail with that error instead (`journal-appended:5:EIO`), to see what the
 * real process does with it.
 */
export const FAIL_STEPS = [
  /** A journal batch is written, not yet fdatasynced. */
  'journal-appended',
  /** A journal batch is fdatasynced, not yet applied or acknowledged. */
  'journal-synced',
  /** The temporary snapshot is written and fsynced, not yet renamed. */
  'snapshot-written',
  /** The snapshot is renamed into place, the directory not yet fsynced. */
  'snapshot-renamed',
  /** The journal has been emptied of what the new snapshot holds (and the directory fsynced). */
  'journal-emptied',
] as const;

export type FailStep = (typeof FAIL_STEPS)[number];

/** Called at each step; the real process's hook kills itself when its step comes up. */
export type Failpoint = (step: FailStep) => void;

export interface FailpointSpec {
  step: FailStep;
  /** The n-th time the step is reached (from 1). */
  nth: number;
  /** Fail with this errno instead of dying. */
  code?: string;
}

/** `step`, `step:n` or `step:n:ERRNO`, or undefined when `spec` is none of these. */
export function parseFailpoint(spec: string): FailpointSpec | undefined {
  const m = /^([a-z-]+)(?::([1-9][0-9]{0,8}))?(?::(E[A-Z]+))?$/.exec(spec);
  const step = FAIL_STEPS.find((s) => s === m?.[1]);
  if (!step) return undefined;
  return m![3] ? { step, nth: Number(m![2] ?? 1), code: m![3] } : { step, nth: Number(m![2] ?? 1) };
}

/** A hook that runs `die` the `nth` time `step` is reached. */
export function failpointAt(step: FailStep, nth: number, die: () => void): Failpoint {
  let seen = 0;
  return (s) => {
    if (s === step && ++seen === nth) die();
  };
}
