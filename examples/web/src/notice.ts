/**
 * The message strip under the header. A refusal shows a live countdown to the moment the API
 * said to come back (`Retry-After`); other errors show their code and message.
 */
import type { Problem } from './problem.js';

export interface Notice {
  show(problem: Problem): void;
  clear(): void;
}

export function createNotice(el: HTMLElement): Notice {
  let timer: ReturnType<typeof setInterval> | undefined;

  function clear(): void {
    clearInterval(timer);
    timer = undefined;
    el.hidden = true;
    el.replaceChildren();
    delete el.dataset.code;
    delete el.dataset.secondsLeft;
  }

  function show(problem: Problem): void {
    clear();
    el.hidden = false;
    el.className = `notice ${problem.kind}`;
    if (problem.kind === 'error') {
      el.dataset.code = problem.title;
      el.append(heading(problem.title), paragraph(problem.detail));
      return;
    }
    el.dataset.code = problem.code;
    const banned = problem.code === 'KEY_BANNED';
    el.append(
      heading(banned ? '429 KEY_BANNED: this API key is banned' : '429 RATE_LIMITED: too many requests'),
      paragraph(
        banned
          ? `Too many refused requests got the key banned (${problem.surface}). It may call again when the ban ends.`
          : `The key has used up its budget for now (${problem.surface}). Requests sent before it refills are refused and count toward a ban.`,
      ),
    );
    const countdown = paragraph('');
    countdown.className = 'countdown';
    el.append(countdown);
    const tick = () => {
      if (problem.until === undefined) {
        countdown.textContent = 'The answer did not say when to try again.';
        return;
      }
      const left = Math.max(0, Math.ceil((problem.until.getTime() - Date.now()) / 1000));
      el.dataset.secondsLeft = String(left);
      if (left === 0) {
        countdown.textContent = 'You can try again now.';
        clearInterval(timer);
        return;
      }
      const verb = banned ? 'The ban ends in' : 'Try again in';
      countdown.textContent = `${verb} ${duration(left)} (at ${problem.until.toLocaleTimeString()}).`;
    };
    tick();
    timer = setInterval(tick, 250);
  }

  return { show, clear };
}

/** `7 s`, `14 min 59 s`, `2 h 05 min`. */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(seconds / 3600)} h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')} min`;
}

function heading(text: string): HTMLElement {
  const h = document.createElement('strong');
  h.textContent = text;
  return h;
}

function paragraph(text: string): HTMLParagraphElement {
  const p = document.createElement('p');
  p.textContent = text;
  return p;
}
