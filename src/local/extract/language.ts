/**
 * Language from the writing system, for pages that declare none. Only scripts used by essentially
 * one language are mapped; Latin, Cyrillic, Arabic or Han text could be many languages, and a wrong
 * tag is worse than none, so those stay unknown.
 */
const SINGLE_LANGUAGE_SCRIPTS: Array<[RegExp, string]> = [
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/gu, 'ja'],
  [/\p{Script=Hangul}/gu, 'ko'],
  [/\p{Script=Thai}/gu, 'th'],
  [/\p{Script=Greek}/gu, 'el'],
  [/\p{Script=Hebrew}/gu, 'he'],
  [/\p{Script=Armenian}/gu, 'hy'],
  [/\p{Script=Georgian}/gu, 'ka'],
  [/\p{Script=Khmer}/gu, 'km'],
  [/\p{Script=Lao}/gu, 'lo'],
];

const LETTER = /\p{L}/gu;
const SAMPLE_LENGTH = 5000;
/** Japanese mixes kana with Han, so a fifth of the letters in kana already marks it. */
const MIN_SHARE_OF_LETTERS = 0.2;

export function detectLanguageFromScript(text: string): string | null {
  const sample = text.slice(0, SAMPLE_LENGTH);
  const letters = sample.match(LETTER)?.length ?? 0;
  if (letters < 20) return null;
  for (const [script, language] of SINGLE_LANGUAGE_SCRIPTS) {
    const count = sample.match(script)?.length ?? 0;
    if (count / letters >= MIN_SHARE_OF_LETTERS) return language;
  }
  return null;
}
