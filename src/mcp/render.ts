/**
 * The text form of tool results, for clients that show a model only text content: compact, one
 * block per result, with everything needed to cite it.
 */
interface RenderedResult {
  name?: string | null;
  url: string;
  datePublished?: string | null;
  snippet?: string | null;
  text?: string | null;
  summary?: string | null;
}

export function renderWebSearch({ query, results }: { query: string; results: RenderedResult[] }): string {
  if (results.length === 0) return `No results for "${query}".`;
  const blocks = results.map((result, i) => {
    const lines = [`${i + 1}. ${result.name || result.url}`, `   ${result.url}`];
    if (result.datePublished) lines.push(`   Published: ${result.datePublished.slice(0, 10)}`);
    const body = result.text ?? result.snippet;
    if (body) lines.push(indent(body));
    if (result.summary) lines.push(indent(`Summary: ${result.summary}`));
    return lines.join('\n');
  });
  return `${results.length} result${results.length === 1 ? '' : 's'} for "${query}":\n\n${blocks.join('\n\n')}`;
}

const EXCERPT_CODE_POINTS = 200;

export function renderRerank(
  { model, results }: { model: string; results: Array<{ index: number; relevance_score: number }> },
  documents: readonly string[],
): string {
  const lines = results.map((result, rank) => {
    const excerpt = [...documents[result.index]!.replace(/\s+/g, ' ').trim()];
    const shown = excerpt.length > EXCERPT_CODE_POINTS ? `${excerpt.slice(0, EXCERPT_CODE_POINTS).join('')}…` : excerpt.join('');
    return `${rank + 1}. document ${result.index}, score ${result.relevance_score.toFixed(3)}: ${shown}`;
  });
  return `Ranked by ${model}, most relevant first:\n${lines.join('\n')}`;
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `   ${line}`)
    .join('\n');
