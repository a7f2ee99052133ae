// API answers of the explorer's recent renders, so that changing only how the graph is drawn
// (one hop more, show all, fold, unfold, a path, a selection) or adding one expansion asks the
// server only for what is new: each answer is fetched once while the user works in the
// explorer. Kept briefly, so new runs still show up soon.
const ANSWER_TTL_MS = 30_000;
const ANSWERS_KEPT = 64;
const answers = new Map<string, { at: number; answer: Promise<unknown> }>();

export function cached<T>(key: string, ask: () => Promise<T>): Promise<T> {
  const known = answers.get(key);
  if (known && performance.now() - known.at < ANSWER_TTL_MS) return known.answer as Promise<T>;
  const answer = ask();
  answers.delete(key);
  answers.set(key, { at: performance.now(), answer });
  answer.catch(() => answers.delete(key)); // never keep a failure
  while (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
  return answer;
}

/** Forget every kept answer (the draw benchmark measures first draws with it). */
export function forgetAnswers(): void {
  answers.clear();
}
