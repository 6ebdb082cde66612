/**
 * Named points on the persistence path where a test can stop the process dead
 * (`PETSTORE_FAILPOINT=<step>[:<n>]`, the n-th time the step is reached) to prove that a restart
 * loses nothing acknowledged, whatever the moment of the crash.
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

/** `step` or `step:n` (the n-th time, from 1), or undefined when `spec` names no step. */
export function parseFailpoint(spec: string): { step: FailStep; nth: number } | undefined {
  const m = /^([a-z-]+)(?::([1-9][0-9]{0,8}))?$/.exec(spec);
  const step = FAIL_STEPS.find((s) => s === m?.[1]);
  return step ? { step, nth: Number(m![2] ?? 1) } : undefined;
}

/** A hook that runs `die` the `nth` time `step` is reached. */
export function failpointAt(step: FailStep, nth: number, die: () => void): Failpoint {
  let seen = 0;
  return (s) => {
    if (s === step && ++seen === nth) die();
  };
}
